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
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
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
	ev := only(r.Events(), Phase)
	assert.Equal(t, []string{Phase, Phase, Phase}, kinds(ev), "a new generation in the same phase is a new Phase event")
	assert.Equal(t, int64(2), ev[1].Generation)
	assert.Equal(t, "m", ev[2].Message)
}

func only(events []Event, kind string) []Event {
	var out []Event
	for _, e := range events {
		if e.Event == kind {
			out = append(out, e)
		}
	}
	return out
}

func graphUpgrade() *upgradesv1beta1.ApplicationUpgrade {
	u := &upgradesv1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u", ResourceVersion: "7"}}
	for _, c := range []struct{ name, dep string }{{"db", ""}, {"worker", "db"}, {"indexer", "db"}, {"api", "worker"}} {
		comp := upgradesv1beta1.Component{Name: c.name, DeploymentRef: upgradesv1beta1.DeploymentReference{Name: "dep-" + c.name}, Image: c.name + ":2"}
		if c.dep != "" {
			comp.DependsOn = []string{c.dep}
		}
		u.Spec.Components = append(u.Spec.Components, comp)
		u.Status.Components = append(u.Status.Components, upgradesv1beta1.ComponentStatus{Name: c.name, Phase: upgradesv1beta1.ComponentPending})
	}
	u.Status.Phase, u.Status.ObservedGeneration = upgradesv1beta1.PhaseProgressing, 1
	return u
}

func TestGraphUpgradeRecordsComponentPhases(t *testing.T) {
	for _, detailed := range []bool{false, true} {
		r := NewRecorder(t0, nil)
		if detailed {
			r = NewDetailedRecorder(t0, nil)
		}
		u := graphUpgrade()
		r.Observe(watch.Added, u.DeepCopy(), t0)
		u.Status.Components[0].Phase = upgradesv1beta1.ComponentRollingOut
		r.Observe(watch.Modified, u.DeepCopy(), t0.Add(time.Second))
		r.Observe(watch.Modified, u.DeepCopy(), t0.Add(2*time.Second)) // nothing changed
		ev := r.Events()
		assert.Equal(t, []string{Phase, ComponentPhase, ComponentPhase, ComponentPhase, ComponentPhase, ComponentPhase}, kinds(ev))
		assert.Equal(t, "Progressing", ev[0].Phase, "a graph v1alpha1 cannot say keeps its v1beta1 phase")
		last := ev[len(ev)-1]
		assert.Equal(t, "db=RollingOut", last.Phase)
		assert.Equal(t, "dep-db", last.Deployment)
		c, p := ComponentOf(last)
		assert.Equal(t, []string{"db", "RollingOut"}, []string{c, p})
	}
}

func TestAlphaShapedGraphKeepsItsV1alpha1Phase(t *testing.T) {
	u := &upgradesv1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"}}
	u.Spec.Components = []upgradesv1beta1.Component{
		{Name: "api", DeploymentRef: upgradesv1beta1.DeploymentReference{Name: "a"}, Image: "a:2", DependsOn: []string{"worker"}},
		{Name: "worker", DeploymentRef: upgradesv1beta1.DeploymentReference{Name: "w"}, Image: "w:2"},
	}
	u.Status.Phase = upgradesv1beta1.PhaseProgressing
	u.Status.Components = []upgradesv1beta1.ComponentStatus{{Name: "api", Phase: upgradesv1beta1.ComponentUpgrading}, {Name: "worker", Phase: upgradesv1beta1.ComponentRolled}}
	assert.True(t, AlphaShaped(u.Spec))
	assert.Equal(t, upgradesv1alpha1.PhaseUpgradingAPI, AlphaPhase(u))

	plain := NewRecorder(t0, nil)
	plain.Observe(watch.Added, u, t0)
	assert.Equal(t, []string{Phase}, kinds(plain.Events()), "the plain log of a v1alpha1-shaped upgrade is unchanged")
	assert.Equal(t, "UpgradingAPI", plain.Events()[0].Phase)

	// the same upgrade read as v1alpha1 records the same
	var alpha upgradesv1alpha1.ApplicationUpgrade
	assert.NoError(t, alpha.ConvertFrom(u.DeepCopy()))
	fromAlpha := NewDetailedRecorder(t0, nil)
	fromAlpha.Observe(watch.Added, &alpha, t0)
	fromHub := NewDetailedRecorder(t0, nil)
	fromHub.Observe(watch.Added, u, t0)
	assert.Equal(t, fromHub.Events(), fromAlpha.Events())
}
