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
			s.setState(st, StateAborting)
			s.startAbortPhase(st)
		default:
			s.setState(st, StateApplyFailed)
			s.setState(st, StateAborting)
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

// startAbortPhase runs the abort phase, after an abort action or on the
// VIM's own after an apply that failed or timed out: nfv_common
// strategy/_strategy.py Strategy.phase_complete sets apply-failed (or
// apply-timeout), calls apply_complete (the failed alarm), then _abort(),
// which makes the strategy "aborting" and builds the abort phase, and
// applies it; its end makes the strategy aborted, abort-failed or
// abort-timeout. (When an abort action is already running and the apply
// phase then fails, the state is apply-failed and stays so.)
func (s *System) startAbortPhase(st *Strategy) {
	st.CurrentPhase = PhaseAbort
	stages := st.abortPlan
	if stages == nil {
		stages = s.abortStages(&st.Apply)
	}
	st.Abort = newPhase(PhaseAbort, stages)
	s.startPhase(st, &st.Abort, len(stages))
}

// abortStages is StrategyPhase._abort: the stages from the current one
// down to the first, each giving (StrategyStage._abort / abort) a stage of
// the same name holding the abort steps of its steps from the current one
// down to the first, when there are any. A stage that completed has its
// current step past its last (StrategyStage.step_complete advanced it), so
// only the stage that was running gives abort steps. Step aborts modelled:
// lock-hosts → unlock-hosts of its hosts (_strategy_steps.py
// LockHostsStep.abort); every kube step (start, download images,
// pre/post application update, networking, storage, cordon, uncordon,
// control plane, kubelet, complete) → a kube-upgrade-abort step on a
// single-controller system, none on duplex (kube_upgrade_steps.py
// AbstractKubeUpgradeStep._abort). So a kube stage with one kube step
// gives one kube-upgrade-abort; the sw-upgrade stages give an unlock when
// their host was locked, else nothing (an empty abort phase completes at
// once: "aborted").
func (s *System) abortStages(ph *Phase) []Stage {
	var out []Stage
	for i := min(ph.CurrentStage, len(ph.Stages)-1); i >= 0; i-- {
		sg := &ph.Stages[i]
		if sg.Result == ResultSuccess || sg.Result == ResultInitial || sg.Result == "" {
			continue
		}
		upto := sg.CurrentStep // past the step that failed or was aborted
		if sg.InProgress {
			upto++ // the running step (an abort action)
		}
		var steps []Step
		for j := min(upto, len(sg.Steps)) - 1; j >= 0; j-- {
			steps = append(steps, s.stepAbort(&sg.Steps[j])...)
		}
		if len(steps) > 0 {
			out = append(out, Stage{Name: sg.Name, abortable: true, Steps: steps})
		}
	}
	return out
}

// stepAbort is a step's abort() in the VIM.
func (s *System) stepAbort(sp *Step) []Step {
	switch {
	case sp.Name == StepLockHosts:
		var hosts []*Host
		for _, n := range sp.EntityNames {
			if h := s.host(n); h != nil {
				hosts = append(hosts, h)
			}
		}
		return []Step{s.newStep(StepUnlockHosts, effect{kind: effUnlock, hosts: sp.EntityNames}, hosts...)}
	case contains(kubeAbortableSteps, sp.Name) && !s.cfg.Mode.IsDuplex():
		return []Step{s.newStep(StepKubeUpgradeAbort, effect{kind: effKubeAbort})}
	}
	return nil
}

// kubeAbortableSteps are the kube steps whose abort() returns _abort()
// (kube_upgrade_steps.py); query and cleanup steps have none.
var kubeAbortableSteps = []string{StepKubeUpgradeStart, StepKubeDownloadImages, StepKubePreApplication,
	StepKubeNetworking, StepKubeStorage, StepKubeHostCordon, StepKubeHostControlPlane, StepKubeHostKubelet,
	StepKubeHostUncordon, StepKubeUpgradeComplete, StepKubePostApplication}

func (s *System) setState(st *Strategy, state StrategyState) {
	st.State = state
	s.record(EventStrategyState, st.UUID, string(st.Type)+" "+string(state))
}
