// Package realnode runs workloads on the local control plane's real node
// (controlplane.Options.RealNode, make node): it turns a pod template
// written for kwok into one that runs real containers of the demo image
// (scenarios/real/nodeimages/demoapp) with the same timings.
package realnode

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
)

// kwok Stage annotations (deploy/kwok/stages) the adaptation reads.
const (
	readyDelayAnnotation   = "pod-ready.stage.kwok.x-k8s.io/delay"
	readyJitterAnnotation  = "pod-ready.stage.kwok.x-k8s.io/jitter-delay"
	deleteDelayAnnotation  = "pod-delete.stage.kwok.x-k8s.io/delay"
	deleteJitterAnnotation = "pod-delete.stage.kwok.x-k8s.io/jitter-delay"
)

// ProbeCommand is the demo image's exec readiness probe.
var ProbeCommand = []string{"/demoapp", "probe"}

// CrashAfter is how long a container of a crash tag runs before it exits
// 1 on the real node (the demo image's CRASH_AFTER): the simulator's
// KubeOptions.CrashLoopRunTime default and the ":crashloop" kwok stage, so
// the crash loop has the same rhythm on every backend.
const CrashAfter = 500 * time.Millisecond

// AdaptPodTemplate makes a kwok pod template run on the real node with the
// timings its kwok annotations describe, as real behaviour of the demo
// container: START_DELAY is the mean pod-ready delay, DRAIN the mean
// pod-delete delay (the time an old pod keeps running after its deletion,
// here a SIGTERM trap), CRASH_AFTER is CrashAfter (used only by the crash
// tags), and an exec readiness probe every second (timeout 5 s). A drain
// that reaches the template's terminationGracePeriodSeconds (kwok caps its
// delete delay at the deletionTimestamp: the pod uses its whole grace
// period, C01) becomes IGNORE_SIGTERM=1: the container ignores SIGTERM and
// the kubelet SIGKILLs it when the grace period ends
// (pkg/kubelet/kuberuntime killContainer: StopContainer with the grace
// period as timeout). The service account token is not mounted (the demo
// containers never call the API server). The annotations stay (kwok
// ignores the real node's pods). Errors: a malformed delay annotation.
func AdaptPodTemplate(tmpl *corev1.PodTemplateSpec) error {
	ready, err := meanDelay(tmpl, readyDelayAnnotation, readyJitterAnnotation)
	if err != nil {
		return err
	}
	drain, err := meanDelay(tmpl, deleteDelayAnnotation, deleteJitterAnnotation)
	if err != nil {
		return err
	}
	grace := int64(corev1.DefaultTerminationGracePeriodSeconds)
	if g := tmpl.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	ignoreTerm := drain >= time.Duration(grace)*time.Second
	if ignoreTerm {
		drain = 0
	}
	for i := range tmpl.Spec.Containers {
		c := &tmpl.Spec.Containers[i]
		c.Env = append(c.Env,
			corev1.EnvVar{Name: "START_DELAY", Value: ready.String()},
			corev1.EnvVar{Name: "DRAIN", Value: drain.String()},
			corev1.EnvVar{Name: "CRASH_AFTER", Value: CrashAfter.String()})
		if ignoreTerm {
			c.Env = append(c.Env, corev1.EnvVar{Name: "IGNORE_SIGTERM", Value: "1"})
		}
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: ProbeCommand}},
			PeriodSeconds:    1,
			FailureThreshold: 1,
			// The default 1 s timed out 290 times in one run of make
			// test-node-features on 2 busy cores (load average ~20): each
			// time a Ready pod turned not Ready for a period, the
			// Deployment's readyReplicas flapped and the handoff waited for
			// it. An exec probe that merely stats a file needs no tighter
			// bound; one failure (the drain removed the file) still turns
			// the pod not Ready within a period.
			TimeoutSeconds: 5,
		}
	}
	// The demo containers never call the API server: no token to mount.
	tmpl.Spec.AutomountServiceAccountToken = ptr.To(false)
	controlplane.RealNodePodSpec(&tmpl.Spec)
	return nil
}

// meanDelay is the mean of kwok's delay: uniform between the delay and the
// jitter-delay annotation when that is larger (kwok's Stage delay
// semantics), else the delay.
func meanDelay(tmpl *corev1.PodTemplateSpec, delayKey, jitterKey string) (time.Duration, error) {
	delay, err := annotationDuration(tmpl, delayKey)
	if err != nil {
		return 0, err
	}
	jitter, err := annotationDuration(tmpl, jitterKey)
	if err != nil {
		return 0, err
	}
	if jitter > delay {
		delay += (jitter - delay) / 2
	}
	return delay, nil
}

// annotationDuration reads a kwok delay annotation (a Go duration); absent
// is 0.
func annotationDuration(tmpl *corev1.PodTemplateSpec, key string) (time.Duration, error) {
	v, ok := tmpl.Annotations[key]
	if !ok {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("realnode: pod template annotation %s=%q: want a non-negative duration such as 3s", key, v)
	}
	return d, nil
}
