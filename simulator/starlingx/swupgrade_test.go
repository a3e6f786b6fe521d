package starlingx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSwUpgradePatchDuplexStages(t *testing.T) {
	s := newSystem(t, Duplex)
	st := built(t, s, swReq("starlingx-13.01.2"))
	require.Equal(t, StateReadyToApply, st.State, st.Build.Reason)
	assert.Equal(t, PhaseBuild, st.CurrentPhase, "the current phase stays build until apply")
	assert.Equal(t, []string{StageSwUpgradeQuery}, stageNames(st.Build))
	assert.Equal(t, []string{StepQueryAlarms, StepQueryUpgrade, StepSwDeployPrecheck}, stepNames(st.Build.Stages[0]))
	assert.Equal(t, "starlingx-13.01.2", st.ReleaseID)
	assert.Equal(t, []string{
		StageSwUpgradeStart,
		StageSwUpgradeControllers, StageSwUpgradeControllers, // standard system: controllers then workers
		StageSwUpgradeWorkers, StageSwUpgradeWorkers,
		StageSwUpgradeComplete, StageSwDeployDelete,
	}, stageNames(st.Apply))
	// in-service patch: no lock, no swact; the standby controller goes first
	assert.Equal(t, []string{StepUpgradeHosts, StepSystemStabilize}, stepNames(st.Apply.Stages[1]))
	assert.Equal(t, []string{Controller1}, st.Apply.Stages[1].Steps[0].EntityNames)
	assert.Equal(t, []string{StepSystemStabilize, StepQueryAlarms, StepActivateUpgrade, StepCompleteUpgrade, StepQueryAlarms},
		stepNames(st.Apply.Stages[5]))
	assert.Equal(t, 100, st.CurrentPhaseCompletion())
	assert.Equal(t, len(st.Apply.Stages), st.Apply.StopAtStage)
}

func TestSwUpgradePatchAppliesRelease(t *testing.T) {
	s := newSystem(t, Simplex)
	st := built(t, s, swReq("starlingx-13.01.2"))
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)

	runUntil(t, s, func() bool { return len(s.Deploys(s.Now())) == 1 })
	assert.Equal(t, DeployStart, s.Deploys(s.Now())[0].State, "the deploy exists while start-upgrade runs")
	runUntil(t, s, func() bool { return s.Deploys(s.Now())[0].State == DeployStartDone })
	d := s.Deploys(s.Now())[0]
	assert.Equal(t, "13.01.0", d.FromRelease)
	assert.Equal(t, "13.01.2", d.ToRelease)
	r1, _ := s.Release(s.Now(), "starlingx-13.01.1")
	assert.Equal(t, ReleaseDeploying, r1.State, "the required patch is deployed along")
	cur, _ := s.Strategy(s.Now(), SwUpgrade)
	assert.Equal(t, StateApplying, cur.State)
	assert.Equal(t, PhaseApply, cur.CurrentPhase)
	assert.Greater(t, cur.CurrentPhaseCompletion(), 0)
	assert.Less(t, cur.CurrentPhaseCompletion(), 100)

	runToEnd(t, s)
	cur, _ = s.Strategy(s.Now(), SwUpgrade)
	assert.Equal(t, StateApplied, cur.State)
	assert.Equal(t, ResultSuccess, cur.Apply.Result)
	assert.Equal(t, len(cur.Apply.Stages), cur.Apply.CurrentStage)
	assert.Equal(t, "starlingx-13.01.2", s.DeployedRelease(s.Now()))
	for _, id := range []string{"starlingx-13.01.0", "starlingx-13.01.1", "starlingx-13.01.2"} {
		r, _ := s.Release(s.Now(), id)
		assert.Equal(t, ReleaseDeployed, r.State, id)
	}
	assert.Empty(t, s.Deploys(s.Now()), "sw-deploy-delete removed the deploy")
	for _, h := range s.Hosts(s.Now()) {
		assert.Equal(t, "starlingx-13.01.2", h.SoftwareRelease, h.Hostname)
	}
}

func TestSwUpgradeWithoutDeleteLeavesDeployPending(t *testing.T) {
	s := newSystem(t, Simplex)
	req := swReq("starlingx-13.01.1")
	req.Delete = false
	applied(t, s, req)
	require.Len(t, s.Deploys(s.Now()), 1)
	assert.Equal(t, DeployCompleted, s.Deploys(s.Now())[0].State)

	st := built(t, s, swReq("starlingx-13.01.2"))
	assert.Equal(t, StateBuildFailed, st.State)
	assert.Contains(t, st.Build.Reason, "Deployment in progress: 13.01.0 to 13.01.1")

	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))
	kube := built(t, s, kubeReq("v1.34.1"))
	assert.Equal(t, StateBuildFailed, kube.State, "a kube upgrade waits for the deploy to be deleted")
	assert.Contains(t, kube.Build.Reason, "software deployment from 13.01.0 to 13.01.1 is in progress")
}

func TestSwUpgradeBuildFailures(t *testing.T) {
	cases := []struct {
		name    string
		mode    SystemMode
		release string
		mutate  func(*Config)
		reason  string
	}{
		{"unknown release", Simplex, "starlingx-99.99.0", nil, "Software release does not exist or is unavailable"},
		{"already deployed", Simplex, "starlingx-13.01.0", nil, "no sw-deployments patches need to be applied"},
		{"major needs its required patch", Simplex, "starlingx-27.03.0", nil, "Required patches are applied: [Fail] (starlingx-13.01.2 is not deployed)"},
		{"major from a patch, not the GA", Simplex, "starlingx-27.03.1", nil, "deploy starlingx-27.03.0 first"},
		{"major needs a supported k8s", Simplex, "starlingx-27.03.0", func(c *Config) {
			c.DeployedRelease = "starlingx-13.01.2"
		}, "Upgrade active kubernetes version [v1.33.0] to one of the supported versions [v1.34.1, v1.35.0]"},
		{"duplex major needs controller-0 active", Duplex, "starlingx-27.03.0", func(c *Config) {
			c.DeployedRelease, c.ActiveKubeVersion, c.ActiveController = "starlingx-13.01.2", "v1.34.1", Controller1
		}, "Active controller is controller-0: [Fail]"},
		{"strict alarms", Simplex, "starlingx-13.01.1", func(c *Config) {
			c.Alarms = []Alarm{{ID: "100.114", Severity: "minor"}}
		}, `No alarms: [Fail] [1] alarms found, [0] of which are management affecting`},
		{"required release unavailable", Simplex, "starlingx-13.01.2", func(c *Config) {
			c.Releases[1].State = ReleaseUnavailable
		}, "Required release starlingx-13.01.1 is unavailable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSystem(t, c.mode, func(cfg *Config) {
				if c.mutate != nil {
					c.mutate(cfg)
				}
			})
			st := built(t, s, swReq(c.release))
			assert.Equal(t, StateBuildFailed, st.State)
			assert.Equal(t, ResultFailed, st.Build.Result)
			assert.Contains(t, st.Build.Reason, c.reason)
			_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
			assert.Equal(t, 500, code(err), "the VIM refuses to apply a failed build")
		})
	}
}

// TestAlarmRestrictions: a sw-upgrade build fails on alarms in USM's
// deploy precheck (sysinv health, precheck ignore list; relaxed and
// permissive pass force, which lets non-management-affecting alarms
// through but never management-affecting ones); a kube-upgrade build fails
// on alarms outside the VIM's kube ignore list (relaxed skips those not
// management-affecting, permissive all).
func TestAlarmRestrictions(t *testing.T) {
	minor := Alarm{ID: "100.114"}
	locked := Alarm{ID: "200.001", MgmtAffecting: true} // on the VIM's kube ignore list, not on the precheck's
	subcloud := Alarm{ID: "280.001", MgmtAffecting: true}
	for _, c := range []struct {
		typ         StrategyType
		alarms      []Alarm
		restriction string
		want        StrategyState
		reason      string
	}{
		{SwUpgrade, []Alarm{minor}, AlarmsStrict, StateBuildFailed, "[1] alarms found, [0] of which are management affecting"},
		{SwUpgrade, []Alarm{minor}, AlarmsRelaxed, StateReadyToApply, ""},
		{SwUpgrade, []Alarm{minor, locked}, AlarmsPermissive, StateBuildFailed, "[2] alarms found, [1] of which are management affecting"},
		{SwUpgrade, []Alarm{subcloud}, AlarmsStrict, StateReadyToApply, ""},
		{KubeUpgrade, []Alarm{minor, locked}, AlarmsStrict, StateBuildFailed, "active alarms present [ 100.114 ]"},
		{KubeUpgrade, []Alarm{minor, locked}, AlarmsRelaxed, StateReadyToApply, ""},
		{KubeUpgrade, []Alarm{{ID: "100.101", MgmtAffecting: true}}, AlarmsPermissive, StateReadyToApply, ""},
	} {
		s := newSystem(t, Simplex, func(cfg *Config) { cfg.Alarms = c.alarms })
		req := swReq("starlingx-13.01.1")
		if c.typ == KubeUpgrade {
			req = kubeReq("v1.34.1")
		}
		req.AlarmRestrictions = c.restriction
		st := built(t, s, req)
		assert.Equal(t, c.want, st.State, "%s %s %v: %s", c.typ, c.restriction, c.alarms, st.Build.Reason)
		assert.Contains(t, st.Build.Reason, c.reason)
	}
}

func TestVIMAlarmsFollowTheStrategyUntilDeleted(t *testing.T) {
	s := newSystem(t, Simplex, func(c *Config) { c.Faults.ApplyFailures = []StageFault{{StageID: 1, Type: SwUpgrade}} })
	ids := func() []string {
		var out []string
		for _, a := range s.Alarms(s.Now()) {
			out = append(out, a.ID)
		}
		return out
	}
	st := built(t, s, swReq("starlingx-13.01.1"))
	assert.Empty(t, ids(), "no alarm while building or ready")
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{AlarmSwUpgradeInProgress}, ids())
	runToEnd(t, s)
	got, _ := s.Strategy(s.Now(), SwUpgrade)
	require.Equal(t, StateAborted, got.State, "apply-failed, then the VIM's own abort phase")
	assert.Equal(t, []StrategyState{StateInitial, StateBuilding, StateReadyToApply, StateApplying, StateApplyFailed, StateAborting, StateAborted}, stateHistory(s, got.UUID))
	assert.Equal(t, []string{AlarmSwUpgradeFailed}, ids(), "raised after apply-failed, kept through the abort phase and while the strategy is kept (is_apply_failed)")
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))
	assert.Empty(t, ids(), "cleared when the strategy is deleted")
}
