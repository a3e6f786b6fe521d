package e2e

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

// Images are the container images a backend can run. On the local control
// plane kwok runs any name; on Kind the kubelet pulls them, so they must exist.
type Images struct {
	WorkerOld, WorkerNew string
	APIOld, APINew       string
	// Bad cannot be pulled: kwok's pod-image-pull-error Stage matches the
	// ":does-not-exist" tag (deploy/kwok/README.md); a real kubelet fails to pull it.
	Bad string
}

// KwokImages are fictional images: kwok pulls nothing.
var KwokImages = Images{
	WorkerOld: "registry.example.com/job-worker:v1.0.0", WorkerNew: "registry.example.com/job-worker:v2.0.0",
	APIOld: "registry.example.com/job-api:v1.0.0", APINew: "registry.example.com/job-api:v2.0.0",
	Bad: "registry.example.com/job-worker:does-not-exist",
}

// KindImages are a small public image pair a real kubelet can pull.
var KindImages = Images{
	WorkerOld: "registry.k8s.io/pause:3.9", WorkerNew: "registry.k8s.io/pause:3.10",
	APIOld: "registry.k8s.io/pause:3.10", APINew: "registry.k8s.io/pause:3.9",
	Bad: "registry.k8s.io/pause:does-not-exist",
}

// Env is the cluster the suite runs on.
type Env struct {
	// Name is "local" (control plane with kwok) or "kind".
	Name string
	// RESTConfig and Kubeconfig reach the cluster as an administrator.
	RESTConfig *rest.Config
	Kubeconfig string
	Images     Images
	// RealKubelet: pods are run by a kubelet, which ignores kwok's
	// annotations; termination delays then come from a preStop sleep.
	RealKubelet bool
}

// Pod annotations read by the kwok Stages in deploy/kwok/stages.
const (
	annCreate      = "pod-create.stage.kwok.x-k8s.io/delay"
	annReady       = "pod-ready.stage.kwok.x-k8s.io/delay"
	annReadyJitter = "pod-ready.stage.kwok.x-k8s.io/jitter-delay"
	annDelete      = "pod-delete.stage.kwok.x-k8s.io/delay"
	annBackoff     = "pod-image-pull-backoff.stage.kwok.x-k8s.io/delay"
)

// Timing is how long a component's pods take: kwok annotations on the local
// control plane; on a real kubelet only Delete is reproduced (preStop sleep).
type Timing struct {
	Create, Ready, ReadyJitter, Delete time.Duration
}

func (e Env) applyTiming(tpl *corev1.PodTemplateSpec, t Timing) {
	ann := map[string]string{}
	set := func(k string, d time.Duration) {
		if d > 0 {
			ann[k] = d.String()
		}
	}
	set(annCreate, t.Create)
	set(annReady, t.Ready)
	set(annReadyJitter, t.ReadyJitter)
	set(annDelete, t.Delete)
	set(annBackoff, time.Second)
	tpl.Annotations = ann
	if e.RealKubelet && t.Delete >= time.Second {
		for i := range tpl.Spec.Containers {
			tpl.Spec.Containers[i].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
				Sleep: &corev1.SleepAction{Seconds: int64(t.Delete / time.Second)}}}
		}
	}
}
