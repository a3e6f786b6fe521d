package eventlog

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

func TestPlainRecorderCarriesHashesButNoDetail(t *testing.T) {
	r := NewRecorder(t0, nil)
	r.Observe(watch.Added, deployment(1, 1, 2, "w:1"), t0)
	r.Observe(watch.Modified, deployment(2, 1, 2, "w:2"), t0)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: "abc"}}}
	r.Observe(watch.Added, pod, t0)
	ev := r.Events()
	assert.Equal(t, []string{DeploymentWrite, DeploymentWrite, PodCreated}, kinds(ev))
	assert.Equal(t, "abc", ev[2].Hash)
	assert.NotEmpty(t, ev[1].HashAfter)
	assert.Equal(t, ev[0].HashAfter, ev[1].HashBefore)
	for _, e := range ev {
		assert.Nil(t, e.Images)
		assert.Nil(t, e.Status)
	}
}

// sidecarFirst is a Deployment whose pods list a proxy before the worker.
func sidecarFirst(gen int64, worker string) *appsv1.Deployment {
	d := deployment(gen, gen, 2, "")
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "proxy", Image: "envoy:1.30.0"}, {Name: "worker", Image: worker}}
	return d
}

// A write names the field managers owning the written image after it
// (managedFields), as the API server's field manager left them: the
// operator's forced apply owns it alone.
func TestDeploymentWritesNameTheImageOwner(t *testing.T) {
	owned := func(gen int64, image string, managers ...string) *appsv1.Deployment {
		d := sidecarFirst(gen, image)
		for _, m := range managers {
			d.ManagedFields = append(d.ManagedFields, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationApply,
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"worker\"}":{"f:image":{}}}}}}}`)}})
		}
		return d
	}
	r := NewRecorder(t0, nil)
	r.Observe(watch.Added, owned(1, "w:1", "kubectl"), t0)
	r.Observe(watch.Modified, owned(2, "w:2", "upgrade-operator"), t0)
	r.Observe(watch.Modified, owned(3, "w:1", "kustomize-controller"), t0)
	r.Observe(watch.Modified, owned(4, "w:3"), t0)
	ev := r.Events()
	require.Len(t, ev, 4)
	assert.Empty(t, ev[0].ImageOwner, "a creation of two containers names no container")
	assert.Equal(t, "upgrade-operator", ev[1].ImageOwner)
	assert.Equal(t, "kustomize-controller", ev[2].ImageOwner)
	assert.Empty(t, ev[3].ImageOwner, "no managedFields, no owner")
}

func TestDeploymentWritesNameTheContainerAndTheHashes(t *testing.T) {
	r := NewRecorder(t0, nil)
	r.Observe(watch.Added, sidecarFirst(1, "w:1"), t0)
	r.Observe(watch.Modified, sidecarFirst(2, "w:2"), t0)
	annotated := sidecarFirst(3, "w:2")
	annotated.Spec.Template.Annotations = map[string]string{"restartedAt": "now"}
	r.Observe(watch.Modified, annotated, t0)
	ev := r.Events()
	require.Len(t, ev, 3, "one write for the creation of a two-container template, one per later change")
	assert.Equal(t, Event{Event: DeploymentWrite, Namespace: "ns", Name: "w", Deployment: "w", RV: "1",
		Containers: []Container{{"proxy", "envoy:1.30.0"}, {"worker", "w:1"}}, HashAfter: ev[0].HashAfter}, ev[0])
	assert.Equal(t, "worker", ev[1].Container)
	assert.Equal(t, "w:2", ev[1].Image)
	assert.Equal(t, ev[0].HashAfter, ev[1].HashBefore)
	assert.NotEqual(t, ev[1].HashBefore, ev[1].HashAfter)
	assert.Empty(t, ev[2].Container, "a template change of no image")
	assert.NotEqual(t, ev[1].HashAfter, ev[2].HashAfter)

	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w-x-1", Labels: map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: "x"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "w-x", Controller: ptr.To(true)}}}}
	p.Spec.Containers = sidecarFirst(1, "w:1").Spec.Template.Spec.Containers
	r.Observe(watch.Added, p, t0)
	last := r.Events()[3]
	assert.Equal(t, []Container{{"proxy", "envoy:1.30.0"}, {"worker", "w:1"}}, last.Containers)
	assert.Equal(t, "w-x", last.ReplicaSet)
	assert.Equal(t, "w", last.Deployment)
}

func TestTemplateHashIsTheControllersFunctionAndFollowsCollisions(t *testing.T) {
	d := sidecarFirst(1, "w:1")
	h := TemplateHash(&d.Spec.Template, nil)
	assert.Equal(t, h, TemplateHash(&d.Spec.Template, nil), "deterministic")
	assert.NotEqual(t, h, TemplateHash(&d.Spec.Template, ptr.To[int32](1)))
	assert.Regexp(t, `^[bcdfghjklmnpqrstvwxz2456789]+$`, h, "safe-encoded like a pod-template-hash label")
}

func TestReadRefusesAVersion1LogInOneLine(t *testing.T) {
	_, err := Read(strings.NewReader(`{"t":0,"event":"PodCreated","name":"p","image":"w:1"}`+"\n"), "old.jsonl")
	require.ErrorIs(t, err, ErrVersion1)
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), "old.jsonl: event log version 1")

	var b strings.Builder
	r := NewRecorder(t0, &b)
	r.Observe(watch.Added, sidecarFirst(1, "w:1"), t0)
	assert.True(t, strings.HasPrefix(b.String(), `{"eventlog":2}`+"\n"))
	got, err := Read(strings.NewReader(b.String()), "new.jsonl")
	require.NoError(t, err)
	assert.Equal(t, r.Events(), got)

	_, err = Read(strings.NewReader(`{"eventlog":3}`+"\n"), "future.jsonl")
	assert.ErrorContains(t, err, "future.jsonl: event log version 3; this build reads version 2 only")
}

func TestReplayTellsOldPodsByHash(t *testing.T) {
	podEv := func(kind, name, hash, rv string) Event {
		return Event{Event: kind, Namespace: "ns", Name: name, Deployment: "w", Hash: hash, ReplicaSet: "w-" + hash, RV: rv}
	}
	events := []Event{
		{Event: DeploymentWrite, Namespace: "ns", Name: "w", HashAfter: "a", RV: "1"},
		podEv(PodCreated, "p1", "a", "2"),
		{Event: DeploymentWrite, Namespace: "ns", Name: "w", Container: "worker", Image: "w:2", HashBefore: "a", HashAfter: "b", RV: "3"},
		podEv(PodCreated, "p2", "b", "4"),
		{Event: DeploymentWrite, Namespace: "ns", Name: "w", HashBefore: "b", HashAfter: "c", RV: "5"},
		podEv(PodCreated, "p3", "c", "6"),
		podEv(PodDeleted, "p1", "a", "7"),
	}
	var seen []string
	Replay(events, func(s *State) {
		var old []string
		for _, k := range s.OldPods("ns", "w") {
			old = append(old, strings.TrimPrefix(k, "ns/"))
		}
		seen = append(seen, strings.Join(old, ","))
	})
	assert.Equal(t, []string{"", "", "p1", "p1", "p1", "p1", ""}, seen,
		"p1 is old once the template was rewritten; p2 (the operator's hash) stays new after a later rewrite")
	final := Final(events)
	assert.Equal(t, 2, final.Deployments["ns/w"].Rewrites)
	assert.Equal(t, map[string]int{"ns/w-b": 1, "ns/w-c": 1}, final.ReplicaSets)
}

// A template that comes back (a GitOps tool re-applying the previous
// image, then Git carrying the target) makes the pods of the first
// template old again once the target is back; a template change of no
// image leaves the previous hash's pods new.
func TestReplayTellsOldPodsAfterARevert(t *testing.T) {
	tmpl := func(img string) []Container {
		return []Container{{Name: "proxy", Image: "envoy:1"}, {Name: "worker", Image: img}}
	}
	write := func(before, after, img, rv string) Event {
		return Event{Event: DeploymentWrite, Namespace: "ns", Name: "w", Deployment: "w", Container: "worker", Image: img,
			HashBefore: before, HashAfter: after, RV: rv, Containers: tmpl(img)}
	}
	podEv := func(name, hash, img, rv string) Event {
		return Event{Event: PodCreated, Namespace: "ns", Name: name, Deployment: "w", Hash: hash, ReplicaSet: "w-" + hash, RV: rv, Containers: tmpl(img)}
	}
	events := []Event{
		{Event: DeploymentWrite, Namespace: "ns", Name: "w", Deployment: "w", HashAfter: "a", RV: "1", Containers: tmpl("w:1")},
		podEv("p1", "a", "w:1", "2"),
		write("a", "b", "w:2", "3"), // the operator's write
		podEv("p2", "b", "w:2", "4"),
		write("b", "a", "w:1", "5"), // reverted: Git's previous image
		write("a", "b", "w:2", "6"), // Git carries the target
		{Event: DeploymentWrite, Namespace: "ns", Name: "w", Deployment: "w", HashBefore: "b", HashAfter: "c", RV: "7", Containers: tmpl("w:2")}, // an annotation
	}
	var seen []string
	Replay(events, func(s *State) {
		var old []string
		for _, k := range s.OldPods("ns", "w") {
			old = append(old, strings.TrimPrefix(k, "ns/"))
		}
		seen = append(seen, strings.Join(old, ","))
	})
	assert.Equal(t, []string{"", "", "p1", "p1", "p2", "p1", "p1"}, seen,
		"while reverted the operator's pods are old; once the target is back the first template's are, and an annotation changes nothing")
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

func TestPodImagesShowsTheWrittenContainerBehindASidecar(t *testing.T) {
	r := NewRecorder(t0, nil)
	r.Observe(watch.Added, sidecarFirst(1, "w:1"), t0)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w-x-1", Labels: map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: "x"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "w-x", Controller: ptr.To(true)}}}}
	p.Spec.Containers = sidecarFirst(1, "w:1").Spec.Template.Spec.Containers
	r.Observe(watch.Added, p, t0)
	assert.Equal(t, "envoy:1.30.0", PodImages(r.Events())(r.Events()[1]), "before any rewrite: the first container")
	r.Observe(watch.Modified, sidecarFirst(2, "w:2"), t0)
	assert.Equal(t, "w:1", PodImages(r.Events())(r.Events()[1]), "the container the rewrite changed")
}
