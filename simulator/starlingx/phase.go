package starlingx

// phaseComplete moves the strategy on when a phase ends
// (nfv_common/strategy/_strategy.py Strategy.phase_complete).
func (s *System) phaseComplete(st *Strategy, ph *Phase) {
	switch {
	case st.State == StateBuilding && ph.Name == PhaseBuild:
		switch ph.Result {
		case ResultSuccess, ResultDegraded:
			s.finishBuild(st)
		case ResultTimedOut:
			s.setState(st, StateBuildTimeout)
		default:
			s.setState(st, StateBuildFailed)
		}
	case st.State == StateApplying && ph.Name == PhaseApply:
		switch ph.Result {
		case ResultSuccess, ResultDegraded:
			s.setState(st, StateApplied)
		case ResultTimedOut:
			s.setState(st, StateApplyTimeout)
			s.startAbortPhase(st)
		default:
			s.setState(st, StateApplyFailed)
			s.startAbortPhase(st)
		}
	case st.State == StateAborting && ph.Name == PhaseApply:
		switch ph.Result {
		case ResultSuccess, ResultDegraded:
			s.setState(st, StateApplied)
		case ResultFailed:
			s.setState(st, StateApplyFailed)
		case ResultTimedOut:
			s.setState(st, StateApplyTimeout)
		}
		s.startAbortPhase(st)
	case st.State == StateAborting && ph.Name == PhaseAbort:
		switch ph.Result {
		case ResultSuccess, ResultDegraded:
			s.setState(st, StateAborted)
		case ResultTimedOut:
			s.setState(st, StateAbortTimeout)
		default:
			s.setState(st, StateAbortFailed)
		}
	}
}

// finishBuild is build_complete: plan the apply phase from the live system
// or fail the build with the planner's reason. The current phase stays
// "build" until the apply starts, as in the VIM.
func (s *System) finishBuild(st *Strategy) {
	var stages []Stage
	var reason string
	switch st.Type {
	case SwUpgrade:
		if st.Request.Rollback {
			stages, reason = s.planSwRollback(st)
		} else {
			stages, reason = s.planSwUpgrade(st)
		}
	case KubeUpgrade:
		stages, reason = s.planKubeUpgrade(st)
	}
	if reason != "" {
		st.Build.Result, st.Build.Reason = ResultFailed, reason
		s.setState(st, StateBuildFailed)
		return
	}
	st.Apply = newPhase(PhaseApply, stages)
	s.setState(st, StateReadyToApply)
}

// startAbortPhase runs the abort phase. The sw-upgrade stages have no
// abort steps, so that abort phase has no stages and completes at once:
// "aborting" becomes "aborted", while "apply-failed" / "apply-timeout" stay
// as they are with current-phase "abort". A kube-upgrade on a simplex
// system aborts the kube upgrade: each kube step's abort is a
// kube-upgrade-abort step (kube_upgrade_steps.py AbstractKubeUpgradeStep
// _abort, single controller only), modelled as one stage of one step; on a
// duplex system there is none (and the VIM refuses the abort action).
func (s *System) startAbortPhase(st *Strategy) {
	st.CurrentPhase = PhaseAbort
	var stages []Stage
	if st.Type == KubeUpgrade && !s.cfg.Mode.IsDuplex() && s.kubeUpgrade != nil {
		stages = []Stage{{Name: StepKubeUpgradeAbort, Steps: []Step{s.newStep(StepKubeUpgradeAbort, effect{kind: effKubeAbort})}}}
	}
	st.Abort = newPhase(PhaseAbort, stages)
	s.startPhase(st, &st.Abort, len(stages))
}

func (s *System) setState(st *Strategy, state StrategyState) {
	st.State = state
	s.record(EventStrategyState, st.UUID, string(st.Type)+" "+string(state))
}
