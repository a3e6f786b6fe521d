package starlingx

import (
	"fmt"
	"time"
)

// ApplyStrategy is the "apply-all" (stageID nil) or "apply-stage" action.
// uuid "" means whichever strategy of type typ exists (the wire carries no
// uuid); a uuid naming another strategy answers 404 "strategy does not
// exist". A refused apply answers 500 with the VIM's reason: the real REST
// layer turns every refused apply into a 500
// (SwUpdateStrategyActionAPI.post; reasons from Strategy._apply).
func (s *System) ApplyStrategy(now time.Time, typ StrategyType, uuid string, stageID *int) (Strategy, error) {
	s.Advance(now)
	st, err := s.lookup(typ, uuid)
	if err != nil {
		return Strategy{}, err
	}
	var reason string
	switch st.CurrentPhase {
	case PhaseBuild:
		reason = s.applyFromBuild(st, stageID)
	case PhaseApply:
		reason = s.applyMore(st, stageID)
	case PhaseAbort:
		reason = "apply not supported during an abort"
		if stageID != nil {
			reason = fmt.Sprintf("apply of stage id %d not supported during an abort", *stageID)
		}
	default:
		reason = "strategy not created"
	}
	if reason != "" {
		return Strategy{}, errf(500, "%s", reason)
	}
	return st.clone(), nil
}

func (s *System) applyFromBuild(st *Strategy, stageID *int) string {
	total := len(st.Apply.Stages)
	if st.State != StateReadyToApply {
		reason := st.Build.Reason
		if reason == "" {
			reason = fmt.Sprintf("strategy is %s, not ready-to-apply", st.State)
		}
		if stageID != nil {
			return fmt.Sprintf("apply of stage id %d failed: %s", *stageID, reason)
		}
		return reason
	}
	stop := total
	if stageID != nil {
		if *stageID != 0 || total == 0 {
			return fmt.Sprintf("invalid stage id %d for the apply, total-stages are %d", *stageID, total)
		}
		stop = 1
	}
	st.CurrentPhase = PhaseApply
	s.injectApplyFaults(st)
	s.setState(st, StateApplying)
	s.startPhase(st, &st.Apply, stop)
	return ""
}

// applyMore continues an apply phase that stopped after an apply-stage.
func (s *System) applyMore(st *Strategy, stageID *int) string {
	ph := &st.Apply
	total := len(ph.Stages)
	paused := ph.InProgress && ph.CurrentStage == ph.StopAtStage
	switch {
	case st.State != StateApplying && st.State != StateAborting:
		return "apply already completed"
	case stageID == nil && paused:
		ph.StopAtStage = total
		s.startStage(st, ph)
	case stageID == nil || !paused:
		return "apply already inprogress"
	case *stageID < ph.CurrentStage:
		return fmt.Sprintf("apply already complete for stage id %d", *stageID)
	case *stageID >= total:
		return fmt.Sprintf("invalid stage id %d for the apply, total-stages are %d", *stageID, total)
	case *stageID != ph.CurrentStage:
		return fmt.Sprintf("stage id %d is not the next stage to be applied, next-stage = %d", *stageID, ph.CurrentStage)
	default:
		ph.StopAtStage = *stageID + 1
		s.startStage(st, ph)
	}
	return ""
}

// AbortStrategy is the "abort" (stageID nil) or "abort-stage" action:
// only while applying, and not during the stages the VIM marks
// non-abortable (400 "Abort rejected: ..."; _vim_sw_update_api_events.py
// _is_abortable). The running step finishes; the strategy is "aborting"
// until then and "aborted" after. Paused between stages it aborts at once.
func (s *System) AbortStrategy(now time.Time, typ StrategyType, uuid string, stageID *int) (Strategy, error) {
	s.Advance(now)
	st, err := s.lookup(typ, uuid)
	if err != nil {
		return Strategy{}, err
	}
	ph := &st.Apply
	if st.State != StateApplying {
		return Strategy{}, errf(400, "Abort rejected: abort can only be executed when the strategy is applying")
	}
	if st.Type == KubeUpgrade && s.cfg.Mode.IsDuplex() {
		// KubeUpgradeStrategy.is_abortable: "duplex systems are not allowed
		// to abort in any step, requiring a backup and restore".
		return Strategy{}, errf(400, "Abort rejected: abort is not supported for %s in the current configuration.", st.Type)
	}
	if ph.CurrentStage < len(ph.Stages) && !ph.Stages[ph.CurrentStage].abortable {
		return Strategy{}, errf(400, "Abort rejected: cannot abort during %s stage.", ph.Stages[ph.CurrentStage].Name)
	}
	paused := ph.CurrentStage == ph.StopAtStage
	if stageID != nil && (paused || *stageID != ph.CurrentStage) {
		return Strategy{}, errf(400, "apply not inprogress for stage id %d", *stageID)
	}
	s.setState(st, StateAborting)
	st.abortPlan = s.abortStages(ph)
	if st.abortPlan == nil {
		st.abortPlan = []Stage{}
	}
	if paused {
		s.endPhase(st, ph, ResultAborted, "")
	} else {
		ph.aborting = true
	}
	return st.clone(), nil
}
