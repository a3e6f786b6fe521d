package eventlog

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func deployment(gen, observed int64, updated int32, image string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", Generation: gen, ResourceVersion: "1"}}
	d.Spec.Replicas = ptr.To[int32](2)
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: image}}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: 2, UpdatedReplicas: updated, AvailableReplicas: 2}
	return d
}

func kinds(events []Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Event)
	}
	return out
}

func TestDetailedRecorderRecordsDeploymentStatus(t *testing.T) {
	r := NewDetailedRecorder(t0, nil)
	r.Observe(watch.Added, deployment(1, 1, 2, "w:1"), t0)
	r.Observe(watch.Modified, deployment(1, 1, 2, "w:1"), t0.Add(time.Second)) // nothing changed
	r.Observe(watch.Modified, deployment(2, 1, 2, "w:2"), t0.Add(2*time.Second))
	r.Observe(watch.Modified, deployment(2, 2, 0, "w:2"), t0.Add(3*time.Second))
	ev := r.Events()
	assert.Equal(t, []string{DeploymentWrite, DeploymentStatus, DeploymentWrite, DeploymentStatus, DeploymentStatus}, kinds(ev))
	assert.Equal(t, []string{"w:2"}, ev[2].Images)
	assert.Equal(t, Counters{Generation: 2, ObservedGeneration: 1, Spec: 2, Replicas: 2, Updated: 2, Available: 2}, *ev[3].Status)
	assert.Equal(t, int32(0), ev[4].Status.Updated)
	assert.Equal(t, 3.0, ev[4].T)
}

func TestPlainRecorderIsUnchanged(t *testing.T) {
	r := NewRecorder(t0, nil)
	r.Observe(watch.Added, deployment(1, 1, 2, "w:1"), t0)
	r.Observe(watch.Modified, deployment(2, 1, 2, "w:2"), t0)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: "abc"}}}
	r.Observe(watch.Added, pod, t0)
	ev := r.Events()
	assert.Equal(t, []string{DeploymentWrite, DeploymentWrite, PodCreated}, kinds(ev))
	for _, e := range ev {
		assert.Nil(t, e.Images)
		assert.Empty(t, e.Hash)
		assert.Nil(t, e.Status)
	}
}

func TestDetailedPhaseCarriesGenerationAndRestarts(t *testing.T) {
	r := NewDetailedRecorder(t0, nil)
	u := &upgradesv1alpha1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"}}
	for _, s := range []struct {
		phase upgradesv1alpha1.Phase
		gen   int64
	}{{"Failed", 1}, {"Failed", 1}, {"Failed", 2}, {"Pending", 2}} {
		u.Status.Phase, u.Status.ObservedGeneration, u.Status.Message = s.phase, s.gen, "m"
		r.Observe(watch.Modified, u.DeepCopy(), t0)
	}
	ev := r.Events()
	assert.Equal(t, []string{Phase, Phase, Phase}, kinds(ev), "a new generation in the same phase is a new Phase event")
	assert.Equal(t, int64(2), ev[1].Generation)
	assert.Equal(t, "m", ev[2].Message)
}
