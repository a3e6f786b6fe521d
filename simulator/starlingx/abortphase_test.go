package starlingx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestApplyFailureRunsTheVIMsAbortPhase pins nfv_common
// strategy/_strategy.py Strategy.phase_complete: an apply phase that fails
// makes the strategy apply-failed, then _abort() makes it aborting and
// builds the abort phase from the failed stage's steps (StrategyPhase
// ._abort, StrategyStage._abort: from the current step down; LockHostsStep
// .abort is an unlock), which runs and ends aborted; the failed alarm stays
// (is_apply_failed holds on the apply phase's result), and an abort action
// is refused from then on (_vim_sw_update_api_events.py _is_abortable).
func TestApplyFailureRunsTheVIMsAbortPhase(t *testing.T) {
	s := newSystem(t, Duplex, func(c *Config) {
		for i := range c.Releases {
			if c.Releases[i].ID == "starlingx-13.01.1" {
				c.Releases[i].RebootRequired = true
			}
		}
		c.Faults.ApplyFailures = []StageFault{{Type: SwUpgrade, Step: StepUpgradeHosts, Reason: "deploy host failed"}}
	})
	st := built(t, s, swReq("starlingx-13.01.1"))
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, s)
	got, _ := s.Strategy(s.Now(), SwUpgrade)
	assert.Equal(t, []StrategyState{StateInitial, StateBuilding, StateReadyToApply, StateApplying, StateApplyFailed, StateAborting, StateAborted},
		stateHistory(s, got.UUID))
	assert.Equal(t, ResultFailed, got.Apply.Result)
	assert.Equal(t, "deploy host failed", got.Apply.Reason)
	failed := got.Apply.Stages[got.Apply.CurrentStage]
	require.Len(t, got.Abort.Stages, 1, "only the stage that was running gives abort steps")
	ab := got.Abort.Stages[0]
	assert.Equal(t, failed.Name, ab.Name, "the abort stage keeps the stage's name (StrategyStage.abort)")
	assert.Equal(t, []string{StepUnlockHosts}, stepNames(ab), "lock-hosts aborts into unlock-hosts")
	assert.Equal(t, failed.Steps[0].EntityNames, ab.Steps[0].EntityNames)
	assert.Equal(t, ResultSuccess, got.Abort.Result)
	for _, h := range s.Hosts(s.Now()) {
		assert.Equal(t, "unlocked", h.Administrative, "%s unlocked by the abort phase", h.Hostname)
	}
	assert.Equal(t, DeployHostFailed, deployState(s), "the abort phase does not touch the USM deploy")
	assert.Equal(t, []string{AlarmSwUpgradeFailed}, alarmIDs(s))
	_, err = s.AbortStrategy(s.Now(), SwUpgrade, got.UUID, nil)
	assert.Equal(t, 400, code(err))
	assert.Contains(t, err.Error(), "Abort rejected: abort can only be executed when the strategy is applying")
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))
	assert.Empty(t, alarmIDs(s))
}

// TestApplyFailureWithoutAbortStepsEndsAbortedAtOnce: a no-reboot patch
// has no lock step, so the abort phase has no stages and completes at once.
func TestApplyFailureWithoutAbortStepsEndsAbortedAtOnce(t *testing.T) {
	s := newSystem(t, Simplex, func(c *Config) {
		c.Faults.ApplyFailures = []StageFault{{Type: SwUpgrade, Step: StepUpgradeHosts}}
	})
	st := built(t, s, swReq("starlingx-13.01.1"))
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, s)
	got, _ := s.Strategy(s.Now(), SwUpgrade)
	assert.Equal(t, StateAborted, got.State)
	assert.Empty(t, got.Abort.Stages)
	assert.Equal(t, PhaseAbort, got.CurrentPhase)
}

// TestKubeAbortPhaseHasOneAbortPerKubeStepOfTheRunningStage pins
// kube_upgrade_steps.py AbstractKubeUpgradeStep._abort with StrategyPhase
// ._abort: on a single controller each kube step reached in the stage that
// was running gives a kube-upgrade-abort step (the model's kube stages hold
// one kube step, so one); the stages that completed give none; the abort
// stage keeps the running stage's name. On duplex a failed kube-upgrade
// has an empty abort phase and the kube upgrade stays in its -failed state.
func TestKubeAbortPhaseHasOneAbortPerKubeStepOfTheRunningStage(t *testing.T) {
	s := newSystem(t, Simplex)
	st := built(t, s, kubeReq("v1.34.1"))
	_, err := s.ApplyStrategy(s.Now(), KubeUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runUntil(t, s, func() bool {
		_, sg, _ := s.running()
		return sg != nil && sg.Name == StageKubeDownloadImages
	})
	running := s.strategy.Apply.CurrentStage
	_, err = s.AbortStrategy(s.Now(), KubeUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, s)
	got, _ := s.Strategy(s.Now(), KubeUpgrade)
	assert.Equal(t, StateAborted, got.State)
	require.Len(t, got.Abort.Stages, 1, "stages 0..%d ran; only the running one gives abort steps", running)
	assert.Equal(t, StageKubeDownloadImages, got.Abort.Stages[0].Name)
	assert.Equal(t, []string{StepKubeUpgradeAbort}, stepNames(got.Abort.Stages[0]))
	assert.Equal(t, KubeUpgradeAborted, s.KubeUpgrades(s.Now())[0].State)
	require.NoError(t, s.DeleteStrategy(s.Now(), KubeUpgrade, "", false))

	// A kube step that fails on simplex: the VIM's own abort phase aborts
	// the kube upgrade.
	f := newSystem(t, Simplex, func(c *Config) {
		c.Faults.ApplyFailures = []StageFault{{Type: KubeUpgrade, Step: StepKubeHostControlPlane}}
	})
	st = built(t, f, kubeReq("v1.34.1"))
	_, err = f.ApplyStrategy(f.Now(), KubeUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, f)
	got, _ = f.Strategy(f.Now(), KubeUpgrade)
	assert.Contains(t, stateHistory(f, got.UUID), StateApplyFailed)
	assert.Equal(t, StateAborted, got.State)
	require.Len(t, got.Abort.Stages, 1)
	assert.Equal(t, []string{StepKubeUpgradeAbort}, stepNames(got.Abort.Stages[0]))
	assert.Equal(t, KubeUpgradeAborted, f.KubeUpgrades(f.Now())[0].State)
	assert.Equal(t, "v1.33.0", f.ActiveKubeVersion(f.Now()))
	assert.Equal(t, []string{AlarmKubeUpgradeFailed}, alarmIDs(f))

	// Duplex: no abort steps; the kube upgrade stays failed.
	d := newSystem(t, Duplex, func(c *Config) {
		c.Faults.ApplyFailures = []StageFault{{Type: KubeUpgrade, Step: StepKubeDownloadImages}}
	})
	st = built(t, d, kubeReq("v1.34.1"))
	_, err = d.ApplyStrategy(d.Now(), KubeUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, d)
	got, _ = d.Strategy(d.Now(), KubeUpgrade)
	assert.Equal(t, StateAborted, got.State)
	assert.Empty(t, got.Abort.Stages)
	assert.Equal(t, "downloading-images-failed", d.KubeUpgrades(d.Now())[0].State)
}

func alarmIDs(s *System) []string {
	var out []string
	for _, a := range s.Alarms(s.Now()) {
		out = append(out, a.ID)
	}
	return out
}
