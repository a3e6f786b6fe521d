//go:build realnode

package realnode_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/realnode"
)

const (
	startDelay = "2s"
	drain      = 6 * time.Second
	image      = "registry.example.com/job-worker:"
)

// TestRealNode starts the control plane with the real node (make node) and
// checks, on real containers, what kwok only models: pods start and become
// Ready through an exec probe, a rolling update keeps each old pod running
// its SIGTERM drain after its deletion (terminating, not Ready, container
// still running), the pod object goes only once the container exited, and
// a crashing image restarts with exit code 1. Run with `make test-node`.
func TestRealNode(t *testing.T) {
	cp, err := controlplane.Start(t.Context(), controlplane.Options{Logf: t.Logf, RealNode: true})
	if errors.Is(err, controlplane.ErrRealNodeUnavailable) {
		t.Skipf("skipped: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			cp.KeepLogs()
		}
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("control plane with real node ready in %s", cp.StartupDuration.Round(time.Millisecond))
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "realnode"}}
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("rolling update keeps old pods running their drain", func(t *testing.T) { testRollingUpdate(t, client) })
	t.Run("crash tag restarts with exit code 1", func(t *testing.T) { testCrash(t, client) })
}

func testRollingUpdate(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	d := deployment("worker", 2, "v1.0.0")
	obs := observePods(t, client, "app=worker")
	began := time.Now()
	if _, err := client.AppsV1().Deployments("realnode").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, client, "worker", 2*time.Minute)
	t.Logf("2 pods Ready on %s in %s", controlplane.RealNodeName, time.Since(began).Round(time.Millisecond))
	pods, err := client.CoreV1().Pods("realnode").List(ctx, metav1.ListOptions{LabelSelector: "app=worker"})
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]bool{}
	for _, p := range pods.Items {
		old[p.Name] = true
		if p.Spec.NodeName != controlplane.RealNodeName {
			t.Errorf("pod %s on node %q, want %s", p.Name, p.Spec.NodeName, controlplane.RealNodeName)
		}
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Running == nil {
			t.Fatalf("pod %s: container not running: %+v", p.Name, p.Status.ContainerStatuses)
		}
	}

	began = time.Now()
	patch := fmt.Appendf(nil, `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":%q}]}}}}`, image+"v2.0.0")
	if _, err := client.AppsV1().Deployments("realnode").Patch(ctx, "worker", "application/strategic-merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRolledOut(t, client, "worker", 3*time.Minute)
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return obs.allDeleted(old), nil
	}); err != nil {
		t.Fatalf("old pods not all deleted: %v", err)
	}
	t.Logf("rolled to v2.0.0 and every old pod gone in %s", time.Since(began).Round(time.Millisecond))
	for name := range old {
		h := obs.history(name)
		if h.terminatingRunning == 0 {
			t.Errorf("old pod %s: never seen terminating with its container running and not Ready; observations: %+v", name, h)
		}
		if got := h.deleted.Sub(h.firstTerminating); got < drain-time.Second {
			t.Errorf("old pod %s: deleted %s after its deletion began, want at least the %s drain", name, got.Round(time.Millisecond), drain)
		}
		if h.exitCode == nil || *h.exitCode != 0 {
			t.Errorf("old pod %s: last container exit code %v, want 0 (the drain ends in a clean exit)", name, h.exitCode)
		}
		t.Logf("old pod %s: terminating %s (container exited at %s, code %d), seen running while terminating %d times",
			name, h.deleted.Sub(h.firstTerminating).Round(time.Millisecond), h.finishedAt.Format(time.RFC3339), ptr.Deref(h.exitCode, -1), h.terminatingRunning)
	}
}

func testCrash(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	d := deployment("crasher", 1, "crash")
	if _, err := client.AppsV1().Deployments("realnode").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last corev1.ContainerStatus
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods("realnode").List(ctx, metav1.ListOptions{LabelSelector: "app=crasher"})
		if err != nil || len(pods.Items) != 1 || len(pods.Items[0].Status.ContainerStatuses) != 1 {
			return false, nil
		}
		last = pods.Items[0].Status.ContainerStatuses[0]
		return last.RestartCount >= 1 && last.LastTerminationState.Terminated != nil, nil
	})
	if err != nil {
		t.Fatalf("crash-tag container never restarted: %v; last status %+v", err, last)
	}
	if code := last.LastTerminationState.Terminated.ExitCode; code != 1 {
		t.Errorf("crash-tag container exited %d, want 1", code)
	}
	if last.Ready {
		t.Error("crash-tag container is Ready")
	}
	t.Logf("crash tag: restartCount %d, last exit code %d (%s)", last.RestartCount, last.LastTerminationState.Terminated.ExitCode, last.LastTerminationState.Terminated.Reason)
}

// deployment is a demo-image Deployment on the real node: ready after
// startDelay, draining for drain on SIGTERM, rolled one pod at a time.
func deployment(name string, replicas int32, tag string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
			"pod-ready.stage.kwok.x-k8s.io/delay":  startDelay,
			"pod-delete.stage.kwok.x-k8s.io/delay": drain.String(),
		}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			AutomountServiceAccountToken:  ptr.To(false),
			Containers:                    []corev1.Container{{Name: "app", Image: image + tag}},
		},
	}
	if err := realnode.AdaptPodTemplate(&tmpl); err != nil {
		panic(err)
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "realnode"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			}},
			Template: tmpl,
		},
	}
}

func waitRolledOut(t *testing.T, client kubernetes.Interface, name string, timeout time.Duration) {
	t.Helper()
	var last appsv1.DeploymentStatus
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		d, err := client.AppsV1().Deployments("realnode").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = d.Status
		want := *d.Spec.Replicas
		return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want &&
			d.Status.AvailableReplicas == want && d.Status.Replicas == want, nil
	})
	if err != nil {
		t.Fatalf("deployment %s not rolled out: %v; last status %+v", name, err, last)
	}
}

// podHistory is what the watch saw of one pod.
type podHistory struct {
	firstTerminating   time.Time // first event with deletionTimestamp set
	terminatingRunning int       // events terminating, container running, not Ready
	deleted            time.Time
	exitCode           *int32
	finishedAt         time.Time // containerd's exit time, as the kubelet reports it
}

type podObserver struct {
	mu   sync.Mutex
	pods map[string]*podHistory
}

// observePods records every pod event of the selector until the test ends.
func observePods(t *testing.T, client kubernetes.Interface, selector string) *podObserver {
	w, err := client.CoreV1().Pods("realnode").Watch(t.Context(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	o := &podObserver{pods: map[string]*podHistory{}}
	done := make(chan struct{})
	t.Cleanup(func() { w.Stop(); <-done })
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			o.record(ev.Type, p, time.Now())
		}
	}()
	return o
}

func (o *podObserver) record(typ watch.EventType, p *corev1.Pod, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	h := o.pods[p.Name]
	if h == nil {
		h = &podHistory{}
		o.pods[p.Name] = h
	}
	for _, cs := range p.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil {
			h.exitCode, h.finishedAt = ptr.To(term.ExitCode), term.FinishedAt.Time
		}
	}
	if p.DeletionTimestamp == nil {
		return
	}
	if h.firstTerminating.IsZero() {
		h.firstTerminating = at
	}
	if len(p.Status.ContainerStatuses) == 1 {
		cs := p.Status.ContainerStatuses[0]
		if cs.State.Running != nil && !cs.Ready {
			h.terminatingRunning++
		}
	}
	if typ == watch.Deleted {
		h.deleted = at
	}
}

func (o *podObserver) allDeleted(names map[string]bool) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for n := range names {
		if h := o.pods[n]; h == nil || h.deleted.IsZero() {
			return false
		}
	}
	return true
}

func (o *podObserver) history(name string) podHistory {
	o.mu.Lock()
	defer o.mu.Unlock()
	if h := o.pods[name]; h != nil {
		return *h
	}
	return podHistory{}
}
