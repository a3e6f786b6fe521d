package starlingx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reach returns a duplex system whose sw-upgrade strategy is in state want.
func reach(t *testing.T, want StrategyState) (*System, Strategy) {
	t.Helper()
	s := newSystem(t, Duplex, func(c *Config) {
		switch want {
		case StateBuildFailed:
			c.Faults.BuildFailures = 1
		case StateBuildTimeout:
			c.Faults.BuildTimeouts = 1
		case StateApplyFailed:
			c.Faults.ApplyFailures = []StageFault{{StageID: 1}}
		case StateApplyTimeout:
			c.Faults.ApplyTimeouts = []StageFault{{StageID: 1}}
		}
	})
	req := swReq("starlingx-13.01.1")
	st, err := s.CreateStrategy(s.Now(), req)
	require.NoError(t, err)
	switch want {
	case StateBuilding:
	case StateReadyToApply, StateBuildFailed, StateBuildTimeout:
		runToEnd(t, s)
	default:
		runToEnd(t, s)
		_, err = s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
		require.NoError(t, err)
		next, _ := s.NextEvent()
		s.Advance(next) // one step done, the next running
		if want == StateAborting || want == StateAborted {
			_, err = s.AbortStrategy(s.Now(), SwUpgrade, st.UUID, nil)
			require.NoError(t, err)
		}
		if want != StateApplying && want != StateAborting {
			runToEnd(t, s)
		}
	}
	got, ok := s.Strategy(s.Now(), SwUpgrade)
	require.True(t, ok)
	end := want
	switch want {
	case StateApplyFailed, StateApplyTimeout:
		// the VIM then runs its abort phase (Strategy.phase_complete →
		// _abort): apply-failed / apply-timeout → aborting → aborted
		end = StateAborted
		require.Contains(t, stateHistory(s, got.UUID), want, "the strategy passed through %s", want)
	}
	require.Equal(t, end, got.State, "build %q apply %q", got.Build.Reason, got.Apply.Reason)
	return s, got
}

func TestDeleteForceRules(t *testing.T) {
	for _, c := range []struct {
		state   StrategyState
		refused string // reason without force; "" = deleted
	}{
		{StateBuilding, "strategy is being built, can't delete"},
		{StateReadyToApply, ""},
		{StateBuildFailed, ""},
		{StateBuildTimeout, ""},
		{StateApplying, "strategy is being applied, can't delete"},
		{StateAborting, "strategy is being aborted, can't delete"},
		{StateApplied, ""},
		{StateAborted, ""},
		{StateApplyFailed, ""},
		{StateApplyTimeout, ""},
	} {
		t.Run(string(c.state), func(t *testing.T) {
			s, st := reach(t, c.state)
			err := s.DeleteStrategy(s.Now(), SwUpgrade, st.UUID, false)
			if c.refused != "" {
				require.Error(t, err)
				assert.Equal(t, 409, code(err))
				assert.Contains(t, err.Error(), c.refused)
				require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, st.UUID, true), "force deletes")
			} else {
				require.NoError(t, err)
			}
			_, ok := s.Strategy(s.Now(), SwUpgrade)
			assert.False(t, ok)
			_, ok = s.NextEvent()
			assert.False(t, ok, "nothing runs once the strategy is gone")
			err = s.DeleteStrategy(s.Now(), SwUpgrade, "", true)
			assert.Equal(t, 404, code(err), "delete when none")
		})
	}
}

func TestSecondCreateConflicts(t *testing.T) {
	s, st := reach(t, StateReadyToApply)
	for _, req := range []CreateRequest{swReq("starlingx-13.01.2"), kubeReq("v1.34.1")} {
		_, err := s.CreateStrategy(s.Now(), req)
		assert.Equal(t, 409, code(err))
		assert.Contains(t, err.Error(), "strategy already exists of type:sw-upgrade")
	}
	_, ok := s.Strategy(s.Now(), KubeUpgrade)
	assert.False(t, ok, "a GET of the other type finds nothing")
	typ, state, ok := s.CurrentStrategy(s.Now())
	assert.True(t, ok)
	assert.Equal(t, SwUpgrade, typ)
	assert.Equal(t, StateReadyToApply, state)
	byUUID, ok := s.StrategyByUUID(s.Now(), st.UUID)
	assert.True(t, ok)
	assert.Equal(t, st.UUID, byUUID.UUID)
}

func TestCreateValidation(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(*CreateRequest)
		reason string
	}{
		{"apply type", func(r *CreateRequest) { r.WorkerApplyType = "sideways" }, "Invalid value for worker-apply-type"},
		{"max parallel", func(r *CreateRequest) { r.MaxParallelWorkerHosts = 11 }, "Invalid value for max-parallel-worker-hosts"},
		{"alarm restrictions", func(r *CreateRequest) { r.AlarmRestrictions = "lax" }, "Invalid value for alarm-restrictions"},
		{"instance action", func(r *CreateRequest) { r.DefaultInstanceAction = "pause" }, "Invalid value for default-instance-action"},
		{"kube to-version", func(r *CreateRequest) { r.Type, r.ToVersion = KubeUpgrade, "" }, "to-version"},
		{"type", func(r *CreateRequest) { r.Type = "fw-update" }, "unknown strategy type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSystem(t, Simplex)
			req := swReq("starlingx-13.01.1")
			c.mutate(&req)
			_, err := s.CreateStrategy(s.Now(), req)
			assert.Equal(t, 400, code(err))
			assert.Contains(t, err.Error(), c.reason)
			_, _, ok := s.CurrentStrategy(s.Now())
			assert.False(t, ok)
		})
	}
	s := newSystem(t, Simplex)
	req := swReq("starlingx-13.01.1")
	req.Rollback = true
	st, err := s.CreateStrategy(s.Now(), req)
	require.NoError(t, err)
	assert.Equal(t, StateBuildFailed, st.State, "combinations the VIM refuses in build() fail the build at once")
	assert.Equal(t, "Cannot set both release and rollback", st.Build.Reason)
}

func TestApplyStageThenApplyAll(t *testing.T) {
	s, st := reach(t, StateReadyToApply)
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, ptr(1))
	assert.Contains(t, err.Error(), "invalid stage id 1 for the apply")

	_, err = s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, ptr(0))
	require.NoError(t, err)
	runToEnd(t, s)
	cur, _ := s.Strategy(s.Now(), SwUpgrade)
	assert.Equal(t, StateApplying, cur.State, "paused after the stage")
	assert.Equal(t, 1, cur.Apply.CurrentStage)
	assert.Equal(t, 1, cur.Apply.StopAtStage)
	assert.Equal(t, ResultSuccess, cur.Apply.Stages[0].Result)
	assert.Equal(t, ResultInitial, cur.Apply.Stages[1].Result)
	assert.Less(t, cur.CurrentPhaseCompletion(), 100)

	for _, c := range []struct {
		stage  int
		reason string
	}{{0, "apply already complete for stage id 0"}, {2, "stage id 2 is not the next stage to be applied, next-stage = 1"},
		{99, "invalid stage id 99 for the apply, total-stages are 7"}} {
		_, err = s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, ptr(c.stage))
		assert.Equal(t, 500, code(err))
		assert.Contains(t, err.Error(), c.reason)
	}
	_, err = s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, ptr(1))
	require.NoError(t, err)
	_, err = s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	assert.Contains(t, err.Error(), "apply already inprogress")
	runToEnd(t, s)
	cur, _ = s.Strategy(s.Now(), SwUpgrade)
	assert.Equal(t, 2, cur.Apply.CurrentStage)

	_, err = s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err, "apply-all continues after an apply-stage")
	runToEnd(t, s)
	cur, _ = s.Strategy(s.Now(), SwUpgrade)
	assert.Equal(t, StateApplied, cur.State)
	_, err = s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	assert.Contains(t, err.Error(), "apply already completed")
}

func TestAbort(t *testing.T) {
	s, st := reach(t, StateReadyToApply)
	_, err := s.AbortStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	assert.Equal(t, 400, code(err))
	assert.Contains(t, err.Error(), "abort can only be executed when the strategy is applying")

	s, st = reach(t, StateApplying)
	_, err = s.AbortStrategy(s.Now(), SwUpgrade, st.UUID, ptr(3))
	assert.Contains(t, err.Error(), "apply not inprogress for stage id 3")
	got, err := s.AbortStrategy(s.Now(), SwUpgrade, st.UUID, ptr(0))
	require.NoError(t, err, "abort-stage of the running stage")
	assert.Equal(t, StateAborting, got.State)
	_, err = s.AbortStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	assert.Equal(t, 400, code(err), "a second abort is refused")
	runToEnd(t, s)
	got, _ = s.Strategy(s.Now(), SwUpgrade)
	assert.Equal(t, StateAborted, got.State)
	assert.Equal(t, ResultAborted, got.Apply.Result)
	assert.Equal(t, ResultSuccess, got.Apply.Stages[0].Steps[1].Result, "the running step (the stage's last) finished")
	assert.Equal(t, ResultSuccess, got.Apply.Stages[0].Result)
	assert.Equal(t, ResultInitial, got.Apply.Stages[1].Result, "the next stages never ran")
	assert.Equal(t, 1, got.Apply.CurrentStage)
	assert.Equal(t, PhaseAbort, got.CurrentPhase)
	assert.Equal(t, 100, got.CurrentPhaseCompletion())
	assert.Equal(t, "starlingx-13.01.0", s.DeployedRelease(s.Now()))
}

func TestAbortWhilePausedAndNonAbortableStage(t *testing.T) {
	s, st := reach(t, StateReadyToApply)
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, ptr(0))
	require.NoError(t, err)
	runToEnd(t, s)
	_, err = s.AbortStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	assert.Equal(t, 400, code(err), "paused before a controller stage: the VIM checks the next stage (_is_abortable)")
	assert.Contains(t, err.Error(), "Abort rejected: cannot abort during sw-upgrade-controllers stage.")
	for stage := 1; stage <= 2; stage++ {
		_, err = s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, ptr(stage))
		require.NoError(t, err)
		runToEnd(t, s)
	}
	got, err := s.AbortStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	assert.Equal(t, StateAborted, got.State, "paused before a worker stage: aborted at once")

	k := newSystem(t, Simplex)
	ks := built(t, k, kubeReq("v1.34.1"))
	_, err = k.ApplyStrategy(k.Now(), KubeUpgrade, ks.UUID, nil)
	require.NoError(t, err)
	runUntil(t, k, func() bool {
		cur, _ := k.Strategy(k.Now(), KubeUpgrade)
		return cur.Apply.CurrentStage == 3
	})
	_, err = k.AbortStrategy(k.Now(), KubeUpgrade, ks.UUID, nil)
	assert.Equal(t, 400, code(err))
	assert.Contains(t, err.Error(), "Abort rejected: cannot abort during kube-upgrade-networking stage.")
}

func TestBuildFailedThenRetry(t *testing.T) {
	s := newSystem(t, Simplex, func(c *Config) { c.Faults.BuildFailures = 2; c.Faults.BuildFailReason = "sw-deploy precheck failed" })
	for i := 0; i < 2; i++ {
		st := built(t, s, swReq("starlingx-13.01.1"))
		require.Equal(t, StateBuildFailed, st.State)
		assert.Equal(t, "sw-deploy precheck failed", st.Build.Reason)
		assert.Equal(t, ResultFailed, st.Build.Stages[0].Steps[2].Result)
		require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, st.UUID, false))
	}
	applied(t, s, swReq("starlingx-13.01.1"))
	assert.Equal(t, "starlingx-13.01.1", s.DeployedRelease(s.Now()))
}

func TestTimeouts(t *testing.T) {
	_, st := reach(t, StateBuildTimeout)
	assert.Equal(t, ResultTimedOut, st.Build.Result)
	assert.Contains(t, st.Build.Reason, "timed out")

	_, st = reach(t, StateApplyTimeout)
	assert.Equal(t, ResultTimedOut, st.Apply.Result)
	assert.Equal(t, ResultTimedOut, st.Apply.Stages[1].Result)
	assert.Equal(t, PhaseAbort, st.CurrentPhase)
}

func TestApplyFailedThenResume(t *testing.T) {
	s, st := reach(t, StateApplyFailed)
	assert.Equal(t, ResultFailed, st.Apply.Result)
	assert.Contains(t, st.Apply.Reason, "injected apply failure at stage 1")
	assert.Equal(t, PhaseAbort, st.CurrentPhase, "an apply failure runs the abort phase")
	assert.Equal(t, 1, st.Apply.CurrentStage)
	require.Len(t, s.Deploys(s.Now()), 1, "the deploy started before the failure")

	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, st.UUID, false))
	again := applied(t, s, swReq("starlingx-13.01.1"))
	assert.NotContains(t, stageNames(again.Apply), StageSwUpgradeStart, "the re-created strategy resumes the deploy")
	assert.Equal(t, "starlingx-13.01.1", s.DeployedRelease(s.Now()))
}

func TestStaleUUIDActions(t *testing.T) {
	s, st := reach(t, StateReadyToApply)
	stale := "00000000-0000-4000-8000-000000000000"
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, stale, nil)
	assert.Equal(t, 404, code(err))
	assert.Contains(t, err.Error(), ReasonStrategyDoesNotExist)
	_, err = s.AbortStrategy(s.Now(), SwUpgrade, stale, nil)
	assert.Contains(t, err.Error(), ReasonStrategyDoesNotExist)
	err = s.DeleteStrategy(s.Now(), SwUpgrade, stale, true)
	assert.Contains(t, err.Error(), ReasonStrategyDoesNotExist)
	_, err = s.ApplyStrategy(s.Now(), KubeUpgrade, st.UUID, nil)
	assert.Equal(t, 404, code(err), "no kube-upgrade strategy")
	_, ok := s.StrategyByUUID(s.Now(), stale)
	assert.False(t, ok)
}

func TestKubeAbortBeforeControlPlaneThenRetry(t *testing.T) {
	s := newSystem(t, Simplex)
	st := built(t, s, kubeReq("v1.34.1"))
	_, err := s.ApplyStrategy(s.Now(), KubeUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runUntil(t, s, func() bool { return len(s.KubeUpgrades(s.Now())) == 1 })
	_, err = s.AbortStrategy(s.Now(), KubeUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, s)
	assert.Equal(t, KubeUpgradeAborted, s.KubeUpgrades(s.Now())[0].State)
	require.NoError(t, s.DeleteStrategy(s.Now(), KubeUpgrade, "", false))
	applied(t, s, kubeReq("v1.34.1"))
	assert.Equal(t, "v1.34.1", s.ActiveKubeVersion(s.Now()))
}

func TestModelIsDeterministic(t *testing.T) {
	a, sa := reach(t, StateApplied)
	b, sb := reach(t, StateApplied)
	assert.Equal(t, sa, sb)
	assert.Equal(t, a.Events(), b.Events())
	a.Advance(t0) // backwards: ignored
	assert.Equal(t, b.Now(), a.Now())
}

func TestAbortMidStage(t *testing.T) {
	s, st := reach(t, StateApplying)
	runUntil(t, s, func() bool {
		cur, _ := s.Strategy(s.Now(), SwUpgrade)
		return cur.Apply.CurrentStage == 3
	})
	cur, _ := s.Strategy(s.Now(), SwUpgrade)
	require.Equal(t, StageSwUpgradeWorkers, cur.Apply.Stages[3].Name, "worker stages can be aborted; controller stages cannot")
	_, err := s.AbortStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	cur, _ = s.Strategy(s.Now(), SwUpgrade)
	require.Equal(t, StateAborting, cur.State)
	assert.Error(t, s.DeleteStrategy(s.Now(), SwUpgrade, st.UUID, false), "no delete while aborting")
	runToEnd(t, s)
	cur, _ = s.Strategy(s.Now(), SwUpgrade)
	assert.Equal(t, StateAborted, cur.State)
	assert.Equal(t, ResultAborted, cur.Apply.Stages[3].Result)
	assert.Equal(t, ResultSuccess, cur.Apply.Stages[3].Steps[0].Result)
	assert.Equal(t, ResultInitial, cur.Apply.Stages[3].Steps[1].Result)
}
