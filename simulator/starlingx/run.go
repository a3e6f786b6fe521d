package starlingx

import (
	"fmt"
	"time"
)

// Advance runs the model forward to now: every step due at or before now
// completes, in time order, each at its own due time. Times before the
// model's current time are ignored (the model never runs backwards).
func (s *System) Advance(now time.Time) {
	for {
		t, ok := s.nextDue()
		if !ok || t.After(now) {
			break
		}
		if t.After(s.now) {
			s.now = t
		}
		s.fire()
	}
	if now.After(s.now) {
		s.now = now
	}
}

// NextEvent is the model time of the next change the system makes on its
// own (the running step's end), or false when nothing runs.
func (s *System) NextEvent() (time.Time, bool) { return s.nextDue() }

// running returns the phase, stage and step executing now, if any.
func (s *System) running() (*Phase, *Stage, *Step) {
	st := s.strategy
	if st == nil {
		return nil, nil, nil
	}
	ph := st.phase(st.CurrentPhase)
	if ph == nil || !ph.InProgress || ph.CurrentStage >= len(ph.Stages) || ph.CurrentStage >= ph.StopAtStage {
		return nil, nil, nil
	}
	sg := &ph.Stages[ph.CurrentStage]
	if !sg.InProgress || sg.CurrentStep >= len(sg.Steps) {
		return nil, nil, nil
	}
	return ph, sg, &sg.Steps[sg.CurrentStep]
}

func (s *System) nextDue() (time.Time, bool) {
	_, _, sp := s.running()
	if sp == nil {
		return time.Time{}, false
	}
	if sp.duration > sp.Timeout {
		return sp.Start.Add(sp.Timeout), true
	}
	return sp.Start.Add(sp.duration), true
}

// fire completes the running step at s.now: timed out when it ran past its
// timeout, failed when a fault or its effect says so, else successful.
func (s *System) fire() {
	st := s.strategy
	ph, sg, sp := s.running()
	sp.End = s.now
	switch {
	case sp.duration > sp.Timeout:
		sp.Result = ResultTimedOut
		sp.Reason = fmt.Sprintf("Step (%s) timed out, timeout_in_secs=%d.", sp.Name, int(sp.Timeout/time.Second))
		s.stepFailed(sp)
	case sp.fail != "":
		sp.Result, sp.Reason = ResultFailed, sp.fail
		s.stepFailed(sp)
	default:
		before := s.activeKube()
		if reason := s.runEffect(st, sp.effect); reason != "" {
			sp.Result, sp.Reason = ResultFailed, reason
			s.stepFailed(sp)
		} else {
			sp.Result = ResultSuccess
		}
		if after := s.activeKube(); after != before && after != "" {
			s.record(EventKubeActive, after, "from "+before)
		}
	}
	s.record(EventStep, st.UUID, fmt.Sprintf("%s/%s/%s %s", ph.Name, sg.Name, sp.Name, sp.Result))
	s.afterStep(st, ph, sg)
}

// afterStep moves on from the step just completed.
func (s *System) afterStep(st *Strategy, ph *Phase, sg *Stage) {
	sp := &sg.Steps[sg.CurrentStep]
	sg.CurrentStep++
	switch {
	case sp.Result != ResultSuccess:
		s.endStage(sg, sp.Result, sp.Reason)
		s.endPhase(st, ph, sp.Result, sp.Reason)
	case sg.CurrentStep < len(sg.Steps) && ph.aborting:
		s.endStage(sg, ResultAborted, "")
		s.endPhase(st, ph, ResultAborted, "")
	case sg.CurrentStep < len(sg.Steps):
		s.startStep(st, &sg.Steps[sg.CurrentStep])
	default:
		s.endStage(sg, ResultSuccess, "")
		ph.CurrentStage++
		s.continuePhase(st, ph)
	}
}

// continuePhase starts the next stage, pauses after an apply-stage, or
// ends the phase.
func (s *System) continuePhase(st *Strategy, ph *Phase) {
	switch {
	case ph.CurrentStage >= len(ph.Stages):
		s.endPhase(st, ph, ResultSuccess, "")
	case ph.aborting:
		s.endPhase(st, ph, ResultAborted, "")
	case ph.CurrentStage >= ph.StopAtStage:
		// apply-stage done: the strategy stays applying until the next action
	default:
		s.startStage(st, ph)
	}
}

func (s *System) startPhase(st *Strategy, ph *Phase, stopAt int) {
	ph.InProgress, ph.Result, ph.Start, ph.StopAtStage = true, ResultInProgress, s.now, stopAt
	if len(ph.Stages) == 0 {
		s.endPhase(st, ph, ResultSuccess, "")
		return
	}
	s.startStage(st, ph)
}

func (s *System) startStage(st *Strategy, ph *Phase) {
	sg := &ph.Stages[ph.CurrentStage]
	sg.InProgress, sg.Result, sg.Start, sg.CurrentStep = true, ResultInProgress, s.now, 0
	if len(sg.Steps) == 0 {
		s.endStage(sg, ResultSuccess, "")
		ph.CurrentStage++
		s.continuePhase(st, ph)
		return
	}
	s.startStep(st, &sg.Steps[0])
}

func (s *System) startStep(st *Strategy, sp *Step) {
	sp.Start, sp.Result = s.now, ResultInProgress
	s.stepStarted(st, sp)
}

func (s *System) endStage(sg *Stage, r Result, reason string) {
	sg.InProgress, sg.Result, sg.Reason, sg.End = false, r, reason, s.now
}

func (s *System) endPhase(st *Strategy, ph *Phase, r Result, reason string) {
	ph.InProgress, ph.Result, ph.Reason, ph.End, ph.aborting = false, r, reason, s.now, false
	s.phaseComplete(st, ph)
}
