package deploy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

func TestSetReadyCondition(t *testing.T) {
	for p, want := range map[Phase]metav1.ConditionStatus{
		PhaseIdle: "True", PhaseDeploying: "False", PhaseAborting: "False", PhaseDryRun: "False", PhaseStopped: "False",
		PhaseBlocked: "False", PhaseBuildFailed: "False", PhaseApplyFailed: "False", PhaseFailed: "False", PhaseInvalid: "False",
		PhaseUnavailable: "Unknown", PhaseVIMError: "Unknown",
	} {
		var st v1alpha1.UpgradeStatus
		SetReadyCondition(&st, p, "R", "m", 3, t0)
		c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
		assert.Equal(t, want, c.Status, p)
		assert.Equal(t, int64(3), c.ObservedGeneration)
		assert.Equal(t, "R", c.Reason)
	}
}

func TestSetProgressingCondition(t *testing.T) {
	cases := []struct {
		p         Phase
		deploying bool
		want      metav1.ConditionStatus
	}{
		{PhaseDeploying, true, "True"}, {PhaseAborting, true, "True"},
		{PhaseUnavailable, true, "True"}, {PhaseUnavailable, false, "False"},
		{PhaseBlocked, true, "True"}, {PhaseBlocked, false, "False"},
		{PhaseIdle, false, "False"}, {PhaseDryRun, true, "False"}, {PhaseStopped, false, "False"},
		{PhaseBuildFailed, false, "False"}, {PhaseApplyFailed, false, "False"}, {PhaseFailed, false, "False"},
		{PhaseInvalid, false, "False"}, {PhaseVIMError, true, "False"},
	}
	for _, tc := range cases {
		var st v1alpha1.UpgradeStatus
		if tc.deploying {
			st.ActiveDeploy.Status = v1alpha1.DeployStatusDeploying
		}
		SetProgressingCondition(&st, tc.p, "R", "m", 1, t0)
		assert.Equal(t, tc.want, meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionProgressing).Status, "%s deploying=%t", tc.p, tc.deploying)
	}
}

func TestSetStalledCondition(t *testing.T) {
	for p, want := range map[Phase]metav1.ConditionStatus{
		PhaseIdle: "False", PhaseDeploying: "False", PhaseAborting: "False", PhaseDryRun: "False", PhaseStopped: "False",
		PhaseBlocked: "False", PhaseBuildFailed: "True", PhaseApplyFailed: "True", PhaseFailed: "True", PhaseInvalid: "True",
		PhaseUnavailable: "False", PhaseVIMError: "True",
	} {
		var st v1alpha1.UpgradeStatus
		SetStalledCondition(&st, p, "", "m", 1, t0)
		c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionStalled)
		assert.Equal(t, want, c.Status, p)
		assert.Equal(t, "Unknown", c.Reason, "an empty reason is not a valid condition reason")
	}
}

func TestConditionTransitionTimeKeptWhileStatusHolds(t *testing.T) {
	var st v1alpha1.UpgradeStatus
	SetReadyCondition(&st, PhaseDeploying, "A", "m1", 1, t0)
	SetReadyCondition(&st, PhaseDeploying, "B", "m2", 1, t0.Add(time.Minute))
	c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady)
	assert.Equal(t, t0, c.LastTransitionTime.Time.UTC())
	assert.Equal(t, "B", c.Reason)
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "00:00", 18*time.Minute + 37*time.Second: "18:37", 59*time.Minute + 59*time.Second + 999*time.Millisecond: "59:59",
		time.Hour: "1:00:00", 26*time.Hour + 3*time.Minute + 4*time.Second: "26:03:04", -time.Second: "00:00",
	} {
		assert.Equal(t, want, FormatDuration(d), d.String())
	}
}

func TestUnobserved(t *testing.T) {
	u := upgrade("starlingx-27.03.0 / v1.35.0", 3, 2, deployingTo("starlingx-13.01.0 / v1.33.0", "starlingx-27.03.0 / v1.35.0", "starlingx-13.01.2", "starlingx-13.01.2"))
	st, p := Unobserved(u, true, "observe the system", assert.AnError, t0)
	assert.Equal(t, PhaseUnavailable, p)
	assert.Equal(t, v1alpha1.DeployStatusDeploying, st.ActiveDeploy.Status, "an outage is never a failed deployment")
	assert.Equal(t, "1:00:00", st.ActiveDeploy.TimeDuration)
	assert.Equal(t, int64(2), st.ObservedGeneration, "the spec change is still to be acted on")
	assert.Equal(t, metav1.ConditionUnknown, meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionReady).Status)
	assert.Equal(t, metav1.ConditionFalse, meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionStalled).Status)
	_, p = Unobserved(u, false, "create", assert.AnError, t0)
	assert.Equal(t, PhaseVIMError, p)
}
