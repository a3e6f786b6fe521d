//go:build e2e

package controlplane_test

import (
	"context"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
)

// Pod annotations read by the kwok Stages in deploy/kwok/stages (see
// deploy/kwok/README.md).
const (
	createDelay      = "pod-create.stage.kwok.x-k8s.io/delay"
	readyDelay       = "pod-ready.stage.kwok.x-k8s.io/delay"
	readyJitterDelay = "pod-ready.stage.kwok.x-k8s.io/jitter-delay"
	deleteDelay      = "pod-delete.stage.kwok.x-k8s.io/delay"
	backoffDelay     = "pod-image-pull-backoff.stage.kwok.x-k8s.io/delay"

	badImage = "registry.example.com/job-worker:does-not-exist"
)

// TestControlPlane starts the real control plane once and runs real
// rollouts on it. Run with `make test-controlplane`.
func TestControlPlane(t *testing.T) {
	cp, err := controlplane.Start(t.Context(), controlplane.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			cp.KeepLogs()
		}
		began := time.Now()
		if err := cp.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
		t.Logf("control plane stopped in %s", time.Since(began).Round(time.Millisecond))
	})
	t.Logf("control plane ready in %s (kubeconfig %s)", cp.StartupDuration.Round(time.Millisecond), cp.Kubeconfig)
	client, err := kubernetes.NewForConfig(cp.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("RollingUpdate", func(t *testing.T) { testRollingUpdate(t, client) })
	t.Run("BadImage", func(t *testing.T) { testBadImage(t, client) })
	t.Run("StageDelays", func(t *testing.T) { testStageDelays(t, client) })
}

// testRollingUpdate checks what shared/reference/rollout-semantics.md
// describes: a surge window, old pods alive with a deletionTimestamp while
// the counters already say "done", and status.terminatingReplicas.
func testRollingUpdate(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	ns := createNamespace(t, client, "rolling-update")
	rec := newRecorder(ctx, t, client, ns)
	d := workerDeployment("worker", 3, "registry.example.com/job-worker:v1")
	d.Spec.Template.Annotations = map[string]string{readyDelay: "1s", deleteDelay: "3s"}

	began := time.Now()
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment %s/%s: %v", ns, d.Name, err)
	}
	rec.until(t, 90*time.Second, "first rollout available", func(r *recorder) bool { return fullyRolled(r, "worker", "registry.example.com/job-worker:v1") })
	t.Logf("first rollout (3 replicas): %s", time.Since(began).Round(time.Millisecond))

	began = time.Now()
	setImage(t, client, ns, "worker", "registry.example.com/job-worker:v2")
	rec.until(t, 90*time.Second, "rolling update fully rolled (no old or terminating pod)", func(r *recorder) bool {
		return fullyRolled(r, "worker", "registry.example.com/job-worker:v2")
	})
	t.Logf("rolling update (maxSurge 1, maxUnavailable 0): %s", time.Since(began).Round(time.Millisecond))
	t.Logf("status timeline:\n%s", rec.timeline())

	rec.mu.Lock()
	defer rec.mu.Unlock()
	var surge, countersDoneWhileTerminating, terminatingReplicas bool
	for _, s := range rec.history["worker"] {
		surge = surge || (s.og == 2 && s.rep == 4)
		countersDoneWhileTerminating = countersDoneWhileTerminating ||
			(s.og >= s.gen && s.rep == 3 && s.upd == 3 && s.avail == 3 && s.terminatingPods > 0)
		terminatingReplicas = terminatingReplicas || (s.term != nil && *s.term > 0)
	}
	if !surge {
		t.Error("never saw the surge window (status.replicas == 4 for generation 2)")
	}
	if !countersDoneWhileTerminating {
		t.Error("never saw replicas == updatedReplicas == availableReplicas == 3 while an old pod was alive with a deletionTimestamp")
	}
	if !terminatingReplicas {
		t.Error("status.terminatingReplicas was never > 0")
	}
	checkPodTimings(t, rec)
}

// checkPodTimings checks the annotations' delays for real: a v2 pod turns
// Ready no sooner than create (1s default) + ready (1s) after it was
// created, and an old pod lives on 3s (pod-delete delay) after its
// deletionTimestamp.
func checkPodTimings(t *testing.T, rec *recorder) {
	t.Helper()
	const slack = 100 * time.Millisecond
	for _, p := range rec.pods {
		if p.image == "registry.example.com/job-worker:v2" && p.everReady {
			if got := p.ready.Sub(p.created); got < 2*time.Second-slack || got > 20*time.Second {
				t.Errorf("pod %s Ready %s after creation, want about 2s (create 1s + ready 1s)", p.name, got)
			}
		}
		if !p.deleting.IsZero() && !p.deleted.IsZero() {
			if got := p.deleted.Sub(p.deleting); got < 3*time.Second-slack || got > 20*time.Second {
				t.Errorf("pod %s removed %s after its deletionTimestamp appeared, want about 3s", p.name, got)
			} else {
				t.Logf("pod %s: Ready %s after creation, removed %s after deletionTimestamp", p.name, p.ready.Sub(p.created).Round(time.Millisecond), got.Round(time.Millisecond))
			}
		}
	}
}

// testBadImage checks the bad-image Stages: pods report ErrImagePull, then
// ImagePullBackOff, and are never Ready.
func testBadImage(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	ns := createNamespace(t, client, "bad-image")
	rec := newRecorder(ctx, t, client, ns)
	d := workerDeployment("bad-worker", 2, badImage)
	d.Spec.Template.Annotations = map[string]string{backoffDelay: "1s"}
	// A second container with a good image keeps running: only the bad one
	// waits.
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers,
		corev1.Container{Name: "sidecar", Image: "registry.example.com/sidecar:v1"})
	began := time.Now()
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment %s/%s: %v", ns, d.Name, err)
	}
	rec.until(t, 60*time.Second, "2 pods in ErrImagePull then ImagePullBackOff", func(r *recorder) bool {
		n := 0
		for _, p := range r.pods {
			if slices.Equal(p.waiting, []string{"ErrImagePull", "ImagePullBackOff"}) {
				n++
			}
		}
		return n == 2
	})
	t.Logf("bad image: ErrImagePull then ImagePullBackOff on both pods after %s", time.Since(began).Round(time.Millisecond))
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, p := range rec.pods {
		if p.everReady {
			t.Errorf("bad-image pod %s became Ready", p.name)
		}
		if !slices.Equal(p.waiting, []string{"ErrImagePull", "ImagePullBackOff"}) {
			t.Errorf("bad-image pod %s waiting reasons %v, want [ErrImagePull ImagePullBackOff]", p.name, p.waiting)
		}
	}
	for _, p := range rec.live {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "sidecar" && (cs.State.Running == nil || !cs.Ready) {
				t.Errorf("pod %s: sidecar (good image) not running and ready: %+v", p.Name, cs)
			}
		}
	}
	if d := rec.deploys["bad-worker"]; d == nil || d.Status.AvailableReplicas != 0 {
		t.Errorf("deployment bad-worker missing or available: %+v", d)
	}
}

// testStageDelays checks the delay semantics of deploy/kwok/README.md with
// bare pods: jitter-delay below delay means exactly delay; a jitter window
// bounds the delay; the pod-delete delay is capped by the grace period.
func testStageDelays(t *testing.T, client kubernetes.Interface) {
	ctx := t.Context()
	ns := createNamespace(t, client, "stage-delays")
	rec := newRecorder(ctx, t, client, ns)
	pods := map[string]map[string]string{
		"jitter-below-delay": {createDelay: "0s", readyDelay: "2s", readyJitterDelay: "1s"},
		"jitter-window":      {createDelay: "0s", readyDelay: "500ms", readyJitterDelay: "1500ms"},
		"grace-cap":          {createDelay: "0s", readyDelay: "0s", deleteDelay: "10s"},
	}
	for name, ann := range pods {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: ptr.To[int64](2),
				Containers:                    []corev1.Container{{Name: "main", Image: "registry.example.com/job-worker:v1"}},
			},
		}
		if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s/%s: %v", ns, name, err)
		}
	}
	rec.until(t, 60*time.Second, "3 pods Ready", func(r *recorder) bool {
		n := 0
		for _, p := range r.pods {
			if p.everReady {
				n++
			}
		}
		return n == 3
	})
	if err := client.CoreV1().Pods(ns).Delete(ctx, "grace-cap", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete pod %s/grace-cap: %v", ns, err)
	}
	rec.until(t, 30*time.Second, "pod grace-cap removed", func(r *recorder) bool { return !r.pods["grace-cap"].deleted.IsZero() })

	rec.mu.Lock()
	defer rec.mu.Unlock()
	const slack = 100 * time.Millisecond
	// Ready times count from creation, so they include scheduling (upper
	// bounds are loose; lower bounds are exact).
	within(t, "jitter-below-delay Ready after", rec.pods["jitter-below-delay"].ready.Sub(rec.pods["jitter-below-delay"].created), 2*time.Second-slack, 10*time.Second)
	within(t, "jitter-window Ready after", rec.pods["jitter-window"].ready.Sub(rec.pods["jitter-window"].created), 500*time.Millisecond-slack, 10*time.Second)
	// Grace period 2s (deletionTimestamp has 1s resolution): removed after
	// 1-2s, not after the 10s pod-delete delay.
	gc := rec.pods["grace-cap"]
	within(t, "grace-cap removed after deletionTimestamp", gc.deleted.Sub(gc.deleting), 500*time.Millisecond, 5*time.Second)
}

func within(t *testing.T, what string, got, low, high time.Duration) {
	t.Helper()
	t.Logf("%s %s (want %s..%s)", what, got.Round(time.Millisecond), low, high)
	if got < low || got > high {
		t.Errorf("%s %s, want between %s and %s", what, got, low, high)
	}
}

// fullyRolled is this project's definition (rollout-semantics.md): the
// generation observed, counters equal to spec, no terminatingReplicas, and
// no live pod of the Deployment that is terminating or runs another image.
func fullyRolled(r *recorder, name, image string) bool {
	d := r.deploys[name]
	if d == nil || d.Status.ObservedGeneration < d.Generation {
		return false
	}
	want := *d.Spec.Replicas
	st := d.Status
	if st.Replicas != want || st.UpdatedReplicas != want || st.AvailableReplicas != want {
		return false
	}
	if st.TerminatingReplicas != nil && *st.TerminatingReplicas != 0 {
		return false
	}
	for _, p := range r.live {
		if p.Labels["app"] == name && (p.DeletionTimestamp != nil || p.Spec.Containers[0].Image != image) {
			return false
		}
	}
	return true
}

func workerDeployment(name string, replicas int32, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxSurge:       ptr.To(intstr.FromInt32(1)),
					MaxUnavailable: ptr.To(intstr.FromInt32(0)),
				},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](30),
					Containers:                    []corev1.Container{{Name: "worker", Image: image}},
				},
			},
		},
	}
}

func createNamespace(t *testing.T, client kubernetes.Interface, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

func setImage(t *testing.T, client kubernetes.Interface, ns, name, image string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	d, err := client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get deployment %s/%s: %v", ns, name, err)
	}
	d.Spec.Template.Spec.Containers[0].Image = image
	if _, err := client.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("set image of deployment %s/%s: %v", ns, name, err)
	}
}
