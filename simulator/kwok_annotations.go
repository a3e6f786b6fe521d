package simulator

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Pod annotations that time the kubelet model's stages. They are the names
// kwok's pod stages read (sigs.k8s.io/kwok kustomize/stage/pod/general), so
// one manifest drives the simulator and a kwok cluster alike; set them in a
// Deployment's pod template. Values are Go duration strings ("500ms", "5s",
// "1m30s"); a missing or unparsable value means the default.
//
// A stage's delay is uniform in [delay, jitter-delay] when the jitter-delay
// annotation is present and later than delay (jitter-delay is the latest
// the stage may happen, as in kwok), else exactly delay; the random part
// has millisecond resolution.
const (
	// AnnotationPodCreateDelay: from binding to containers started (phase
	// Running, or image pull failure). Default 0.
	AnnotationPodCreateDelay       = "pod-create.stage.kwok.x-k8s.io/delay"
	AnnotationPodCreateJitterDelay = "pod-create.stage.kwok.x-k8s.io/jitter-delay"
	// AnnotationPodReadyDelay: from containers started to Ready. Default 1s.
	AnnotationPodReadyDelay       = "pod-ready.stage.kwok.x-k8s.io/delay"
	AnnotationPodReadyJitterDelay = "pod-ready.stage.kwok.x-k8s.io/jitter-delay"
	// AnnotationPodDeleteDelay: from deletionTimestamp being set to the
	// final delete, capped by the grace period (the deletionTimestamp).
	// Default 1s.
	AnnotationPodDeleteDelay       = "pod-delete.stage.kwok.x-k8s.io/delay"
	AnnotationPodDeleteJitterDelay = "pod-delete.stage.kwok.x-k8s.io/jitter-delay"
)

// Image tags the kubelet model treats specially.
const (
	// ImageTagNotFound never pulls: the container waits in ErrImagePull and
	// ImagePullBackOff by turns, the pod stays Pending and never Ready.
	ImageTagNotFound = "does-not-exist"
	// ImageTagCrashLoop starts, exits with code 1 after
	// KubeOptions.CrashLoopRunTime and restarts with back-off
	// (CrashLoopBackOff); it is never Ready.
	ImageTagCrashLoop = "crashloop"
	// ImageTagNeverReady starts and keeps running but never passes its
	// readiness check (a readiness probe that never succeeds): the pod is
	// Running and never Ready, so a rollout to it ends at the Deployment's
	// progress deadline.
	ImageTagNeverReady = "never-ready"
)

// ImageMarkers are the image tags the kubelet model treats specially, each
// with kwok Stages of the same behaviour in deploy/kwok/stages (checked by
// scenarios/real/controlplane TestStagesCoverEveryImageMarker).
var ImageMarkers = []string{ImageTagNotFound, ImageTagCrashLoop, ImageTagNeverReady}

// Default stage delays (virtual time).
const (
	DefaultPodCreateDelay = 0
	DefaultPodReadyDelay  = time.Second
	DefaultPodDeleteDelay = time.Second
)

// stageDelay is the delay of one kwok stage for a pod, drawing the jitter
// from the simulation's random source.
func (s *Sim) stageDelay(pod *corev1.Pod, delayKey, jitterKey string, def time.Duration) time.Duration {
	d := annotationDuration(pod, delayKey, def)
	latest := annotationDuration(pod, jitterKey, -1)
	if latest <= d {
		return d
	}
	spanMs := int64((latest - d) / time.Millisecond)
	return d + time.Duration(s.rng.Int63n(spanMs+1))*time.Millisecond
}

func annotationDuration(pod *corev1.Pod, key string, def time.Duration) time.Duration {
	v, ok := pod.Annotations[key]
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return def
	}
	return d
}
