package realnode

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
)

func template(annotations map[string]string, grace int64) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Name: "job-worker", Annotations: annotations},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To(grace),
			Containers:                    []corev1.Container{{Name: "worker", Image: "registry.example.com/job-worker:v1.0.0"}},
		},
	}
}

func env(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		out[e.Name] = e.Value
	}
	return out
}

// The demo's worker annotations (deploy/demo/job-worker.yaml) become the
// container's start delay and drain: the means of kwok's uniform draws.
func TestAdaptPodTemplateDemoWorker(t *testing.T) {
	tmpl := template(map[string]string{
		"pod-ready.stage.kwok.x-k8s.io/delay":         "3s",
		"pod-ready.stage.kwok.x-k8s.io/jitter-delay":  "5s",
		"pod-delete.stage.kwok.x-k8s.io/delay":        "8s",
		"pod-delete.stage.kwok.x-k8s.io/jitter-delay": "12s",
	}, 30)
	require.NoError(t, AdaptPodTemplate(tmpl))
	c := tmpl.Spec.Containers[0]
	assert.Equal(t, map[string]string{"START_DELAY": "4s", "DRAIN": "10s", "CRASH_AFTER": "500ms"}, env(c))
	assert.Equal(t, ProbeCommand, c.ReadinessProbe.Exec.Command)
	assert.Equal(t, corev1.PullNever, c.ImagePullPolicy)
	assert.Equal(t, "true", tmpl.Spec.NodeSelector[controlplane.RealNodeLabel])
	assert.True(t, tmpl.Spec.HostNetwork)
	assert.False(t, *tmpl.Spec.AutomountServiceAccountToken)
	require.Len(t, tmpl.Spec.Tolerations, 1)
	assert.Equal(t, controlplane.RealNodeTaintKey, tmpl.Spec.Tolerations[0].Key)
}

// A pod whose drain reaches its grace period (C01: grace 60 s, terminating
// in 60 s) ignores SIGTERM and is SIGKILLed by the kubelet at the end of it;
// one second less drains normally.
func TestAdaptPodTemplateWholeGracePeriod(t *testing.T) {
	tmpl := template(map[string]string{"pod-delete.stage.kwok.x-k8s.io/delay": "60s"}, 60)
	require.NoError(t, AdaptPodTemplate(tmpl))
	assert.Equal(t, map[string]string{"START_DELAY": "0s", "DRAIN": "0s", "CRASH_AFTER": "500ms", "IGNORE_SIGTERM": "1"}, env(tmpl.Spec.Containers[0]))
	tmpl = template(map[string]string{"pod-delete.stage.kwok.x-k8s.io/delay": "59s"}, 60)
	require.NoError(t, AdaptPodTemplate(tmpl))
	assert.Equal(t, map[string]string{"START_DELAY": "0s", "DRAIN": "59s", "CRASH_AFTER": "500ms"}, env(tmpl.Spec.Containers[0]))
}

func TestAdaptPodTemplateRefuses(t *testing.T) {
	err := AdaptPodTemplate(template(map[string]string{"pod-ready.stage.kwok.x-k8s.io/delay": "soon"}, 30))
	assert.ErrorContains(t, err, `pod-ready.stage.kwok.x-k8s.io/delay="soon"`)
}

func exited(v float64) *float64 { return &v }

func TestCheckExits(t *testing.T) {
	base := []eventlog.Event{
		{T: 0, Event: eventlog.DeploymentWrite, Namespace: "ns", Deployment: "w", Image: "w:1"},
		{T: 0, Event: eventlog.DeploymentWrite, Namespace: "ns", Deployment: "a", Image: "a:1"},
		{T: 5, Event: eventlog.DeploymentWrite, Namespace: "ns", Deployment: "w", Image: "w:2"},
		{T: 20, Event: eventlog.PodDeleted, Namespace: "ns", Name: "w-old-1", Deployment: "w", Image: "w:1", Exited: exited(19)},
		{T: 31, Event: eventlog.PodDeleted, Namespace: "ns", Name: "w-old-2", Deployment: "w", Image: "w:1", Exited: exited(30)},
	}
	ok := append(append([]eventlog.Event(nil), base...), eventlog.Event{T: 31.2, Event: eventlog.DeploymentWrite, Namespace: "ns", Deployment: "a", Image: "a:2"})
	rep, err := CheckExits(ok, "ns", "w", "a")
	require.NoError(t, err)
	assert.Equal(t, ExitReport{LastOldExit: 30, APIWrite: 31.2, OldPods: 2}, rep)

	early := append(append([]eventlog.Event(nil), base...), eventlog.Event{T: 25, Event: eventlog.DeploymentWrite, Namespace: "ns", Deployment: "a", Image: "a:2"})
	_, err = CheckExits(early, "ns", "w", "a")
	assert.ErrorContains(t, err, "image written at 25.000s, before old worker pod w-old-2's container exited at 30.000s")

	noExit := append([]eventlog.Event(nil), ok...)
	noExit[3].Exited = nil
	_, err = CheckExits(noExit, "ns", "w", "a")
	assert.ErrorContains(t, err, "no container exit time")

	_, err = CheckExits(base, "ns", "w", "a")
	assert.ErrorContains(t, err, "no image change of ns/a")
}

// C01's shape: the old pod ignores SIGTERM and its container exits when the
// 60 s grace period ends (SIGKILL); one that exited 10 s after its deletion
// did not use its grace period.
func TestCheckGraceKills(t *testing.T) {
	events := []eventlog.Event{
		{T: 0, Event: eventlog.DeploymentWrite, Namespace: "ns", Deployment: "w", Image: "w:1"},
		{T: 5, Event: eventlog.DeploymentWrite, Namespace: "ns", Deployment: "w", Image: "w:2"},
		{T: 23.4, Event: eventlog.PodDeleting, Namespace: "ns", Name: "w-old", Deployment: "w", Image: "w:1"},
		{T: 87.2, Event: eventlog.PodDeleted, Namespace: "ns", Name: "w-old", Deployment: "w", Image: "w:1", Exited: exited(84.6)},
	}
	held, err := CheckGraceKills(events, "ns", "w", 60*time.Second)
	require.NoError(t, err)
	require.Len(t, held, 1)
	assert.InDelta(t, 61.2, held[0], 1e-9)

	events[3].Exited = exited(33.4)
	_, err = CheckGraceKills(events, "ns", "w", 60*time.Second)
	assert.ErrorContains(t, err, "old worker pod ns/w-old ignores SIGTERM but its container exited 10.0s after its deletion, before the end of its 1m0s grace period")

	events[3].Exited = nil
	_, err = CheckGraceKills(events, "ns", "w", 60*time.Second)
	assert.ErrorContains(t, err, "no container exit time")
	_, err = CheckGraceKills(events[:2], "ns", "w", 60*time.Second)
	assert.ErrorContains(t, err, "no old ns/w pod deleted")
}
