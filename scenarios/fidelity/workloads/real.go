package workloads

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RunReal runs sc on a real cluster in namespace ns (created here; the
// cluster must have sc.Nodes schedulable nodes named NodeNames) and
// returns its sequences. It watches the namespace's StatefulSets,
// DaemonSets and Pods from before the create, and waits for each settle
// on the watched state (no polling), each wait bounded by settleLimit.
func RunReal(ctx context.Context, cs kubernetes.Interface, c client.Client, sc Scenario, ns string) (string, error) {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("%s: create namespace %s: %w", sc.Name, ns, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &realWatch{rec: NewRecorder(time.Now()), pods: map[string]*corev1.Pod{}, changed: make(chan struct{}, 1)}
	w.rec.PerPod = sc.PerPod
	if err := w.start(ctx, cs, ns); err != nil {
		return "", fmt.Errorf("%s: %w", sc.Name, err)
	}
	obj := sc.Object(ns)
	if err := c.Create(ctx, obj); err != nil {
		return "", fmt.Errorf("%s: create %s: %w", sc.Name, obj.GetName(), err)
	}
	if err := w.settle(ctx, sc, "create", obj.GetGeneration(), 0); err != nil {
		return "", err
	}
	for i, step := range sc.Steps {
		w.mu.Lock()
		seen := w.rec.PodsSeen()
		w.mu.Unlock()
		minPods, err := applyStep(ctx, c, obj, step, seen)
		if err != nil {
			return "", fmt.Errorf("%s: step %d: %w", sc.Name, i+1, err)
		}
		if err := w.settle(ctx, sc, fmt.Sprintf("step %d", i+1), obj.GetGeneration(), minPods); err != nil {
			return "", err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return Format(w.rec.Sequences(obj.GetName())), nil
}

// realWatch keeps the latest workload and pods of one namespace and the
// Recorder fed from the watches.
type realWatch struct {
	mu       sync.Mutex
	rec      *Recorder
	workload client.Object
	pods     map[string]*corev1.Pod
	err      error
	changed  chan struct{}
}

func (w *realWatch) start(ctx context.Context, cs kubernetes.Interface, ns string) error {
	type lister struct {
		list  func(context.Context) (string, error)
		watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
	}
	apps, core := cs.AppsV1(), cs.CoreV1()
	ls := []lister{
		{func(ctx context.Context) (string, error) {
			l, err := apps.StatefulSets(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return "", err
			}
			return l.ResourceVersion, nil
		}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return apps.StatefulSets(ns).Watch(ctx, o)
		}},
		{func(ctx context.Context) (string, error) {
			l, err := apps.DaemonSets(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return "", err
			}
			return l.ResourceVersion, nil
		}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return apps.DaemonSets(ns).Watch(ctx, o)
		}},
		{func(ctx context.Context) (string, error) {
			l, err := core.Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return "", err
			}
			return l.ResourceVersion, nil
		}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return core.Pods(ns).Watch(ctx, o)
		}},
	}
	for _, l := range ls {
		rv, err := l.list(ctx)
		if err != nil {
			return fmt.Errorf("list in %s: %w", ns, err)
		}
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{WatchFuncWithContext: l.watch})
		if err != nil {
			return fmt.Errorf("watch in %s: %w", ns, err)
		}
		go w.consume(ctx, rw)
	}
	return nil
}

func (w *realWatch) consume(ctx context.Context, rw watch.Interface) {
	defer rw.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-rw.ResultChan():
			if !ok {
				return
			}
			w.apply(ev)
			select {
			case w.changed <- struct{}{}:
			default:
			}
		}
	}
}

func (w *realWatch) apply(ev watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	deleted := ev.Type == watch.Deleted
	switch o := ev.Object.(type) {
	case *appsv1.StatefulSet, *appsv1.DaemonSet:
		w.workload = o.(client.Object)
		w.rec.Observe(w.workload, deleted, time.Now())
	case *corev1.Pod:
		if deleted {
			delete(w.pods, o.Name)
		} else {
			w.pods[o.Name] = o
		}
		w.rec.Observe(o, deleted, time.Now())
	case *metav1.Status:
		w.err = fmt.Errorf("watch error: %s", o.Message)
	default:
		w.err = fmt.Errorf("unexpected watch object %T", ev.Object)
	}
}

// settle waits until the watch has delivered generation gen of the
// workload (or a later one) and minPods pods, and Settled holds on the
// watched state.
func (w *realWatch) settle(ctx context.Context, sc Scenario, step string, gen int64, minPods int) error {
	deadline := time.NewTimer(settleLimit)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		ok, err := w.workload != nil && w.workload.GetGeneration() >= gen && w.rec.PodsSeen() >= minPods && w.settledLocked(sc), w.err
		w.mu.Unlock()
		if err != nil {
			return fmt.Errorf("%s: %s: %w", sc.Name, step, err)
		}
		if ok {
			return nil
		}
		select {
		case <-w.changed:
		case <-deadline.C:
			return fmt.Errorf("%s: %s: not settled after %s", sc.Name, step, settleLimit)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (w *realWatch) settledLocked(sc Scenario) bool {
	if w.workload == nil {
		return false
	}
	pods := make([]corev1.Pod, 0, len(w.pods))
	for _, p := range w.pods {
		pods = append(pods, *p)
	}
	return Settled(w.workload, controlled(pods, w.workload), sc.Nodes)
}
