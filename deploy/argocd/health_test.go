package argocd

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/kstatus"
	"github.com/lunadas/upgrade-operator/operator/platform/deploy"
)

// The argocd-cm snippet carries health.lua, unchanged, for both kinds.
func TestConfigMapSnippetIsTheScript(t *testing.T) {
	data, err := os.ReadFile("argocd-cm.yaml")
	require.NoError(t, err)
	var cm struct {
		Data map[string]string `json:"data"`
	}
	require.NoError(t, yaml.Unmarshal(data, &cm))
	for _, k := range []string{
		"resource.customizations.health.upgrades.lunadas.dev_ApplicationUpgrade",
		"resource.customizations.health.upgrade.starlingx.io_Upgrade",
	} {
		assert.Equal(t, HealthLua, cm.Data[k], k)
	}
	require.Len(t, cm.Data, 2)
}

// The Upgrade in every phase, with the conditions the controller writes
// (operator/platform/deploy's Set*Condition), as the API server serves it.
func TestUpgradeHealthAtEveryPhase(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		phase     deploy.Phase
		deploying bool
		want      string
	}{
		{deploy.PhaseIdle, false, "Healthy"},
		{deploy.PhaseDeploying, true, "Progressing"},
		{deploy.PhaseAborting, true, "Progressing"},
		{deploy.PhaseUnavailable, true, "Progressing"},
		{deploy.PhaseBlocked, true, "Progressing"},
		{deploy.PhaseBlocked, false, "Suspended"},
		{deploy.PhaseDryRun, false, "Suspended"},
		{deploy.PhaseStopped, false, "Suspended"},
		{deploy.PhaseBuildFailed, false, "Degraded"},
		{deploy.PhaseApplyFailed, false, "Degraded"},
		{deploy.PhaseFailed, false, "Degraded"},
		{deploy.PhaseInvalid, false, "Degraded"},
		{deploy.PhaseVIMError, false, "Degraded"},
	}
	for _, tc := range cases {
		u := upgrade(3, 3)
		st := &u.Status
		if tc.deploying {
			st.ActiveDeploy.Status = v1alpha1.DeployStatusDeploying
		}
		msg := "message of " + string(tc.phase)
		deploy.SetReadyCondition(st, tc.phase, "R", msg, 3, now)
		deploy.SetProgressingCondition(st, tc.phase, "R", msg, 3, now)
		deploy.SetStalledCondition(st, tc.phase, "R", msg, 3, now)
		kstatus.SetReconciling(&st.Conditions)
		status, message := health(t, u)
		assert.Equal(t, tc.want, status, "%s (deploying %v)", tc.phase, tc.deploying)
		assert.Equal(t, msg, message, tc.phase)
	}

	// Before the first reconcile (observedGeneration defaulted to 0) and
	// after a spec change the operator has not seen: Progressing, never
	// the old Healthy.
	status, _ := health(t, upgrade(1, 0))
	assert.Equal(t, "Progressing", status)
	u := upgrade(4, 3)
	deploy.SetReadyCondition(&u.Status, deploy.PhaseIdle, "R", "m", 3, now)
	status, _ = health(t, u)
	assert.Equal(t, "Progressing", status)
	status, _ = health(t, &v1alpha1.Upgrade{ObjectMeta: metav1.ObjectMeta{Name: "system", Generation: 1}})
	assert.Equal(t, "Progressing", status)
}

func upgrade(gen, observed int64) *v1alpha1.Upgrade {
	u := &v1alpha1.Upgrade{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Upgrade"},
		ObjectMeta: metav1.ObjectMeta{Name: "system", Generation: gen}}
	u.Status.ObservedGeneration = observed
	return u
}

// health runs the script on obj after a JSON round trip (numbers become
// float64, as Argo CD decodes them).
func health(t *testing.T, obj runtime.Object) (string, string) {
	t.Helper()
	data, err := yaml.Marshal(obj)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, yaml.Unmarshal(data, &m))
	status, message, err := Health(HealthLua, m)
	require.NoError(t, err)
	return status, message
}

// A broken script is reported, not read as healthy.
func TestHealthReportsScriptErrors(t *testing.T) {
	_, _, err := Health("return nil .. 1", map[string]any{})
	require.Error(t, err)
	_, _, err = Health("return 1", map[string]any{})
	require.Error(t, err)
}
