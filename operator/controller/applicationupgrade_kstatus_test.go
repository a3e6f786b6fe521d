package controller

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/deploy/argocd"
	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/kstatus"
)

// kstatusOf runs kstatus (what Flux healthChecks, kubectl wait and
// cli-utils' appliers use) on the ApplicationUpgrade as stored.
func (w *world) kstatusOf(name string) status.Status {
	w.t.Helper()
	var u v1beta1.ApplicationUpgrade
	require.NoError(w.t, w.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &u))
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&u)
	require.NoError(w.t, err)
	res, err := status.Compute(&unstructured.Unstructured{Object: obj})
	require.NoError(w.t, err)
	return res.Status
}

// At every phase the reconciler writes, kstatus computes InProgress while
// rolling, Current when Completed and Failed when Failed: a GitOps tool can
// gate on an ApplicationUpgrade.
func TestKstatusAtEveryPhase(t *testing.T) {
	w, oldWorkerPod := demoWorld(t)

	type row struct {
		phase v1.Phase
		want  status.Status
	}
	var got []row
	step := func(do func()) {
		if do != nil {
			do()
		}
		p := w.reconcile("upgrade-v2")
		got = append(got, row{p, w.kstatusOf("upgrade-v2")})
	}
	step(nil)                                              // Pending
	step(nil)                                              // UpgradingWorkers
	step(nil)                                              // WaitingForWorkers
	step(func() { w.rollOut("job-worker", oldWorkerPod) }) // counters done, an old pod terminating
	step(func() { w.finishTermination(oldWorkerPod) })     // UpgradingAPI
	step(nil)                                              // WaitingForAPI
	step(func() { w.rollOut("job-api", "") })              // Completed

	assert.Equal(t, []row{
		{v1.PhasePending, status.InProgressStatus},
		{v1.PhaseUpgradingWorkers, status.InProgressStatus},
		{v1.PhaseWaitingForWorkers, status.InProgressStatus},
		{v1.PhaseWaitingForWorkers, status.InProgressStatus},
		{v1.PhaseUpgradingAPI, status.InProgressStatus},
		{v1.PhaseWaitingForAPI, status.InProgressStatus},
		{v1.PhaseCompleted, status.CurrentStatus},
	}, got)
}

func TestKstatusFailedAndRestarted(t *testing.T) {
	// The worker Deployment does not exist: a configuration error, Failed.
	w := newWorld(t, deployment("job-api", "api", "a:v1"), upgrade("upgrade-v2"))
	assert.Equal(t, v1.PhasePending, w.reconcile("upgrade-v2"))
	assert.Equal(t, status.InProgressStatus, w.kstatusOf("upgrade-v2"))
	assert.Equal(t, v1.PhaseFailed, w.reconcile("upgrade-v2"))
	assert.Equal(t, status.FailedStatus, w.kstatusOf("upgrade-v2"))

	// A spec change bumps the generation: until the operator observes it,
	// kstatus says InProgress (not the stale Failed), then the new run is InProgress.
	u := w.beta("upgrade-v2")
	u.Spec.Components[0].DeploymentRef.Name = "job-api2"
	u.Generation = 2
	require.NoError(t, w.c.Update(context.Background(), u))
	assert.Equal(t, status.InProgressStatus, w.kstatusOf("upgrade-v2"))
	assert.Equal(t, v1.PhasePending, w.reconcile("upgrade-v2"))
	assert.Equal(t, status.InProgressStatus, w.kstatusOf("upgrade-v2"))
}

// Before the operator's first status write, status.observedGeneration is 0
// (the CRD defaults it and it is serialized even when 0) while
// metadata.generation is 1, so kstatus says InProgress: a health check that
// runs before the operator has seen the object does not pass early. The
// API server's defaulting itself is checked by
// TestEnvtestKstatusInProgressBeforeFirstReconcile.
func TestKstatusBeforeFirstReconcileIsInProgress(t *testing.T) {
	w := newWorld(t, upgrade("upgrade-v2"))
	assert.Equal(t, status.InProgressStatus, w.kstatusOf("upgrade-v2"))
}

// Reconciling (the condition kstatus reads) mirrors Progressing at every
// v1beta1 phase: True while Pending or Progressing, False once Completed
// or Failed.
func TestReconcilingMirrorsProgressing(t *testing.T) {
	for _, phase := range []v1beta1.Phase{v1beta1.PhasePending, v1beta1.PhaseProgressing, v1beta1.PhaseCompleted, v1beta1.PhaseFailed} {
		st := &v1beta1.ApplicationUpgradeStatus{Phase: phase, Message: "m"}
		now := metav1.Now()
		setProgressingCondition(st, "R", 2, now, phase == v1beta1.PhaseFailed)
		kstatus.SetReconciling(&st.Conditions)
		p := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionProgressing)
		r := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionReconciling)
		require.NotNil(t, r, phase)
		assert.Equal(t, p.Status, r.Status, phase)
		assert.Equal(t, int64(2), r.ObservedGeneration)
		assert.Equal(t, !phase.Terminal(), r.Status == metav1.ConditionTrue, phase)
	}
}

// Argo CD's view (deploy/argocd/health.lua run by gopher-lua, the
// interpreter Argo CD embeds) of the ApplicationUpgrade the reconciler
// writes at every phase: Progressing while rolling, Healthy when
// Completed, Degraded when Failed.
func TestArgoCDHealthAtEveryPhase(t *testing.T) {
	w, oldWorkerPod := demoWorld(t)
	var got []string
	step := func(do func()) {
		if do != nil {
			do()
		}
		p := w.reconcile("upgrade-v2")
		got = append(got, string(p)+"="+w.argoHealth("upgrade-v2"))
	}
	got = append(got, "created="+w.argoHealth("upgrade-v2"))
	step(nil)
	step(nil)
	step(nil)
	step(func() { w.rollOut("job-worker", oldWorkerPod) })
	step(func() { w.finishTermination(oldWorkerPod) })
	step(nil)
	step(func() { w.rollOut("job-api", "") })
	assert.Equal(t, []string{"created=Progressing", "Pending=Progressing", "UpgradingWorkers=Progressing",
		"WaitingForWorkers=Progressing", "WaitingForWorkers=Progressing", "UpgradingAPI=Progressing",
		"WaitingForAPI=Progressing", "Completed=Healthy"}, got)

	f := newWorld(t, deployment("job-api", "api", "a:v1"), upgrade("upgrade-v2"))
	f.reconcile("upgrade-v2")
	assert.Equal(t, v1.PhaseFailed, f.reconcile("upgrade-v2"))
	assert.Equal(t, "Degraded", f.argoHealth("upgrade-v2"))
}

func (w *world) argoHealth(name string) string {
	w.t.Helper()
	var u v1beta1.ApplicationUpgrade
	require.NoError(w.t, w.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &u))
	data, err := json.Marshal(&u)
	require.NoError(w.t, err)
	var m map[string]any
	require.NoError(w.t, json.Unmarshal(data, &m))
	status, _, err := argocd.Health(argocd.HealthLua, m)
	require.NoError(w.t, err)
	return status
}

// A GitOps tool taking the worker's image back after Completed: the
// operator never writes it again, so nothing moves until a person fixes
// the manifest — Stalled=True and Progressing=False with reason
// ImageReverted (kstatus Failed: a Flux health check fails at once
// instead of at its timeout; a tenant trial read Progressing=True). Git
// fixed, the upgrade rolls on and is Current again.
func TestKstatusStalledByARevert(t *testing.T) {
	w, oldWorkerPod := demoWorld(t)
	for _, p := range []v1.Phase{v1.PhasePending, v1.PhaseUpgradingWorkers, v1.PhaseWaitingForWorkers} {
		require.Equal(t, p, w.reconcile("upgrade-v2"))
	}
	w.rollOut("job-worker", oldWorkerPod)
	w.finishTermination(oldWorkerPod)
	require.Equal(t, v1.PhaseUpgradingAPI, w.reconcile("upgrade-v2"))
	require.Equal(t, v1.PhaseWaitingForAPI, w.reconcile("upgrade-v2"))
	w.rollOut("job-api", "")
	require.Equal(t, v1.PhaseCompleted, w.reconcile("upgrade-v2"))

	setImage := func(image string) {
		d, _ := w.get("job-worker")
		d.Spec.Template.Spec.Containers[0].Image = image
		d.Generation++
		require.NoError(t, w.c.Update(context.Background(), d))
		d.Status.ObservedGeneration = d.Generation
		require.NoError(t, w.c.Status().Update(context.Background(), d))
	}
	setImage("registry.example.com/job-worker:v1.0.0")
	w.reconcile("upgrade-v2")
	assert.Equal(t, status.FailedStatus, w.kstatusOf("upgrade-v2"))
	conds := w.beta("upgrade-v2").Status.Conditions
	for typ, want := range map[string]metav1.ConditionStatus{v1beta1.ConditionStalled: metav1.ConditionTrue,
		v1beta1.ConditionProgressing: metav1.ConditionFalse, v1beta1.ConditionReconciling: metav1.ConditionFalse, v1beta1.ConditionReady: metav1.ConditionFalse} {
		c := meta.FindStatusCondition(conds, typ)
		require.NotNil(t, c, typ)
		assert.Equal(t, want, c.Status, typ)
		assert.Equal(t, "ImageReverted", c.Reason, typ)
	}

	setImage("registry.example.com/job-worker:v2.0.0")
	for i := 0; i < 4 && w.alpha("upgrade-v2").Status.Phase != v1.PhaseCompleted; i++ {
		w.reconcile("upgrade-v2")
	}
	assert.Equal(t, v1.PhaseCompleted, w.alpha("upgrade-v2").Status.Phase)
	assert.Equal(t, status.CurrentStatus, w.kstatusOf("upgrade-v2"))
}
