package deploy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/kstatus"
)

// kstatus (sigs.k8s.io/cli-utils, what Flux health checks and kubectl
// wait use) over every phase of the Upgrade, with the conditions the
// controller writes for it: Current only when Idle, Failed when stalled,
// InProgress otherwise; Reconciling mirrors Progressing.
func TestKstatusAtEveryUpgradePhase(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		phase     Phase
		deploying bool // status.activeDeploy.status Deploying
		want      status.Status
	}{
		{PhaseIdle, false, status.CurrentStatus},
		{PhaseDeploying, true, status.InProgressStatus},
		{PhaseAborting, true, status.InProgressStatus},
		{PhaseDryRun, false, status.InProgressStatus},
		{PhaseStopped, false, status.InProgressStatus},
		{PhaseBlocked, false, status.InProgressStatus},
		{PhaseBlocked, true, status.InProgressStatus},
		{PhaseUnavailable, true, status.InProgressStatus},
		{PhaseBuildFailed, false, status.FailedStatus},
		{PhaseApplyFailed, false, status.FailedStatus},
		{PhaseFailed, false, status.FailedStatus},
		{PhaseInvalid, false, status.FailedStatus},
		{PhaseVIMError, false, status.FailedStatus},
	}
	for _, tc := range cases {
		t.Run(string(tc.phase), func(t *testing.T) {
			u := &v1alpha1.Upgrade{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Upgrade"},
				ObjectMeta: metav1.ObjectMeta{Name: "system", Generation: 3}}
			st := &u.Status
			st.ObservedGeneration = 3
			if tc.deploying {
				st.ActiveDeploy.Status = v1alpha1.DeployStatusDeploying
			}
			SetReadyCondition(st, tc.phase, "R", "m", 3, now)
			SetProgressingCondition(st, tc.phase, "R", "m", 3, now)
			SetStalledCondition(st, tc.phase, "R", "m", 3, now)
			kstatus.SetReconciling(&st.Conditions)
			p := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionProgressing)
			r := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReconciling)
			require.NotNil(t, r)
			assert.Equal(t, p.Status, r.Status)
			assert.Equal(t, tc.want, kstatusOf(t, u))
		})
	}
}

// A new Upgrade before its first reconcile: the CRD defaults
// status.observedGeneration to 0 (serialized when 0), so kstatus says
// InProgress, not Current.
func TestKstatusUpgradeBeforeFirstReconcile(t *testing.T) {
	u := &v1alpha1.Upgrade{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Upgrade"},
		ObjectMeta: metav1.ObjectMeta{Name: "system", Generation: 1}}
	assert.Equal(t, status.InProgressStatus, kstatusOf(t, u))
}

func kstatusOf(t *testing.T, u *v1alpha1.Upgrade) status.Status {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(u)
	require.NoError(t, err)
	res, err := status.Compute(&unstructured.Unstructured{Object: obj})
	require.NoError(t, err)
	return res.Status
}
