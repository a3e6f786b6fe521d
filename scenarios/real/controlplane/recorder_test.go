//go:build e2e

package controlplane_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// podRecord is what the recorder saw of one pod, each time being when the
// watch event arrived.
type podRecord struct {
	name, image                       string
	created, ready, deleting, deleted time.Time
	everReady                         bool
	waiting                           []string // waiting reasons, consecutive duplicates dropped
}

// snapshot is one Deployment's status together with the number of its pods
// that are alive with a deletionTimestamp, taken after every watch event.
type snapshot struct {
	at                     time.Time
	gen, og                int64
	rep, upd, ready, avail int32
	term                   *int32
	terminatingPods        int
}

func (s snapshot) String() string {
	term := "nil"
	if s.term != nil {
		term = fmt.Sprint(*s.term)
	}
	return fmt.Sprintf("gen:%d og:%d rep:%d upd:%d ready:%d avail:%d term:%s alive-terminating-pods:%d",
		s.gen, s.og, s.rep, s.upd, s.ready, s.avail, term, s.terminatingPods)
}

func (s snapshot) same(o snapshot) bool {
	sameTerm := (s.term == nil) == (o.term == nil) && (s.term == nil || *s.term == *o.term)
	return sameTerm && s.gen == o.gen && s.og == o.og && s.rep == o.rep && s.upd == o.upd &&
		s.ready == o.ready && s.avail == o.avail && s.terminatingPods == o.terminatingPods
}

// recorder watches the Deployments and Pods of one namespace from a
// goroutine and keeps what it saw; until waits on it.
type recorder struct {
	mu      sync.Mutex
	changed chan struct{}
	pods    map[string]*podRecord
	live    map[string]*corev1.Pod
	deploys map[string]*appsv1.Deployment
	history map[string][]snapshot
	err     error
}

func newRecorder(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string) *recorder {
	t.Helper()
	r := &recorder{
		changed: make(chan struct{}, 1),
		pods:    map[string]*podRecord{},
		live:    map[string]*corev1.Pod{},
		deploys: map[string]*appsv1.Deployment{},
		history: map[string][]snapshot{},
	}
	// Watch from the resourceVersion of an empty list: every later event.
	dl, err := client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list deployments in %s: %v", ns, err)
	}
	pl, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list pods in %s: %v", ns, err)
	}
	dw, err := watchtools.NewRetryWatcherWithContext(ctx, dl.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.AppsV1().Deployments(ns).Watch(ctx, o)
		},
	})
	if err != nil {
		t.Fatalf("watch deployments in %s: %v", ns, err)
	}
	pw, err := watchtools.NewRetryWatcherWithContext(ctx, pl.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods(ns).Watch(ctx, o)
		},
	})
	if err != nil {
		t.Fatalf("watch pods in %s: %v", ns, err)
	}
	go r.consume(ctx, dw, pw)
	return r
}

func (r *recorder) consume(ctx context.Context, dw, pw watch.Interface) {
	defer dw.Stop()
	defer pw.Stop()
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return
		case ev, ok = <-dw.ResultChan():
		case ev, ok = <-pw.ResultChan():
		}
		if !ok {
			return
		}
		r.apply(time.Now(), ev)
		select {
		case r.changed <- struct{}{}:
		default:
		}
	}
}

func (r *recorder) apply(now time.Time, ev watch.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch obj := ev.Object.(type) {
	case *appsv1.Deployment:
		r.deploys[obj.Name] = obj
	case *corev1.Pod:
		r.applyPod(now, ev.Type, obj)
	case *metav1.Status:
		r.err = fmt.Errorf("watch error: %s", obj.Message)
		return
	}
	for name, d := range r.deploys {
		s := r.snapshot(now, d)
		h := r.history[name]
		if len(h) == 0 || !h[len(h)-1].same(s) {
			r.history[name] = append(h, s)
		}
	}
}

func (r *recorder) applyPod(now time.Time, typ watch.EventType, pod *corev1.Pod) {
	rec := r.pods[pod.Name]
	if rec == nil {
		rec = &podRecord{name: pod.Name, image: pod.Spec.Containers[0].Image, created: now}
		r.pods[pod.Name] = rec
	}
	if typ == watch.Deleted {
		delete(r.live, pod.Name)
		rec.deleted = now
		return
	}
	r.live[pod.Name] = pod
	if pod.DeletionTimestamp != nil && rec.deleting.IsZero() {
		rec.deleting = now
	}
	if podReady(pod) && !rec.everReady {
		rec.everReady, rec.ready = true, now
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && (len(rec.waiting) == 0 || rec.waiting[len(rec.waiting)-1] != w.Reason) {
			rec.waiting = append(rec.waiting, w.Reason)
		}
	}
}

func (r *recorder) snapshot(now time.Time, d *appsv1.Deployment) snapshot {
	s := snapshot{
		at: now, gen: d.Generation, og: d.Status.ObservedGeneration,
		rep: d.Status.Replicas, upd: d.Status.UpdatedReplicas, ready: d.Status.ReadyReplicas,
		avail: d.Status.AvailableReplicas, term: d.Status.TerminatingReplicas,
	}
	sel := labels.SelectorFromSet(d.Spec.Selector.MatchLabels)
	for _, p := range r.live {
		if p.DeletionTimestamp != nil && sel.Matches(labels.Set(p.Labels)) {
			s.terminatingPods++
		}
	}
	return s
}

// until waits until cond holds on the recorded state, failing the test
// after timeout. cond runs with the recorder locked.
func (r *recorder) until(t *testing.T, timeout time.Duration, what string, cond func(r *recorder) bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		ok, err := cond(r), r.err
		r.mu.Unlock()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s; deployments:\n%s", timeout, what, r.timeline())
		}
	}
}

// timeline renders every Deployment's status history.
func (r *recorder) timeline() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for name, h := range r.history {
		fmt.Fprintf(&b, "  %s:\n", name)
		for _, s := range h {
			fmt.Fprintf(&b, "    %s %s\n", s.at.Format("15:04:05.000"), s)
		}
	}
	return b.String()
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
