package starlingx

import (
	"fmt"
	"time"
)

// CreateStrategy creates and starts building a strategy. The VIM holds one
// strategy of any type at a time: a second create answers 409 "strategy
// already exists of type:<type>" (nfv-vim directors/_sw_mgmt_director.py).
// Invalid parameters answer 400; parameter combinations the VIM refuses in
// build() (and ones the model does not implement) give a strategy that is
// build-failed at once.
func (s *System) CreateStrategy(now time.Time, req CreateRequest) (Strategy, error) {
	s.Advance(now)
	if s.strategy != nil {
		return Strategy{}, errf(409, "strategy already exists of type:%s", s.strategy.Type)
	}
	if err := normalize(&req); err != nil {
		return Strategy{}, err
	}
	st := &Strategy{UUID: s.newUUID(), Type: req.Type, State: StateInitial, CurrentPhase: PhaseInitial, Request: req}
	st.Apply, st.Abort = newPhase(PhaseApply, nil), newPhase(PhaseAbort, nil)
	s.strategy = st
	s.record(EventStrategyState, st.UUID, string(st.Type)+" "+string(StateInitial))
	if req.Type == SwUpgrade {
		if reason := swUnmodelled(req); reason != "" {
			st.Build = newPhase(PhaseBuild, nil)
			st.CurrentPhase, st.Build.Result, st.Build.Reason = PhaseBuild, ResultFailed, reason
			s.setState(st, StateBuildFailed)
			return st.clone(), nil
		}
		st.Build = newPhase(PhaseBuild, s.swBuildStages(req.Rollback))
	} else {
		st.Build = newPhase(PhaseBuild, s.kubeBuildStages())
	}
	s.injectBuildFault(st)
	st.CurrentPhase = PhaseBuild
	s.setState(st, StateBuilding)
	s.startPhase(st, &st.Build, len(st.Build.Stages))
	return st.clone(), nil
}

// normalize fills defaults and checks enumerations the way the VIM's wsme
// types do (400 "Invalid value for ...").
func normalize(req *CreateRequest) error {
	if req.Type != SwUpgrade && req.Type != KubeUpgrade {
		return errf(400, "unknown strategy type %q: want sw-upgrade or kube-upgrade", req.Type)
	}
	if req.ControllerApplyType == "" {
		req.ControllerApplyType = ApplySerial
	}
	if req.AlarmRestrictions == "" {
		req.AlarmRestrictions = AlarmsStrict
	}
	if req.DefaultInstanceAction == "" {
		req.DefaultInstanceAction = InstanceStopStart
	}
	for _, f := range []struct {
		field string
		v     ApplyType
	}{{"controller-apply-type", req.ControllerApplyType}, {"storage-apply-type", req.StorageApplyType}, {"worker-apply-type", req.WorkerApplyType}} {
		if f.v != "" && f.v != ApplySerial && f.v != ApplyParallel && f.v != ApplyIgnore {
			return errf(400, "Invalid value for %s: %q (serial, parallel or ignore)", f.field, f.v)
		}
	}
	if req.MaxParallelWorkerHosts != 0 && (req.MaxParallelWorkerHosts < 2 || req.MaxParallelWorkerHosts > 10) {
		return errf(400, "Invalid value for max-parallel-worker-hosts")
	}
	if req.MaxParallelWorkerHosts == 0 {
		req.MaxParallelWorkerHosts = 2
	}
	switch req.AlarmRestrictions {
	case AlarmsStrict, AlarmsRelaxed, AlarmsPermissive:
	default:
		return errf(400, "Invalid value for alarm-restrictions: %q (strict, relaxed or permissive)", req.AlarmRestrictions)
	}
	if req.DefaultInstanceAction != InstanceStopStart && req.DefaultInstanceAction != InstanceMigrate {
		return errf(400, "Invalid value for default-instance-action: %q (stop-start or migrate)", req.DefaultInstanceAction)
	}
	if req.Type == KubeUpgrade && req.ToVersion == "" {
		return errf(400, "Invalid input for field/attribute to-version. Value: None. Mandatory field missing.")
	}
	return nil
}

// injectBuildFault consumes a pending build fault: the last build step
// fails, or runs past its timeout.
func (s *System) injectBuildFault(st *Strategy) {
	stages := st.Build.Stages
	last := &stages[len(stages)-1].Steps[len(stages[len(stages)-1].Steps)-1]
	switch {
	case s.faults.BuildFailures > 0:
		s.faults.BuildFailures--
		last.fail = s.faults.BuildFailReason
		if last.fail == "" {
			last.fail = "injected build failure"
		}
	case s.faults.BuildTimeouts > 0:
		s.faults.BuildTimeouts--
		last.duration = last.Timeout + time.Second
	}
}

// injectApplyFaults consumes pending apply faults for this strategy: the
// first step of the named stage fails, or runs past its timeout.
func (s *System) injectApplyFaults(st *Strategy) {
	n := len(st.Apply.Stages)
	if f, ok := takeStageFault(&s.faults.ApplyFailures, st.Type, n); ok {
		stage, step := f.StageID, 0
		if f.Step != "" {
			stage, step = findStep(st.Apply, f.Step)
		}
		if stage >= 0 {
			sp := &st.Apply.Stages[stage].Steps[step]
			sp.fail = f.Reason
			if sp.fail == "" {
				sp.fail = fmt.Sprintf("injected apply failure at stage %d (%s)", stage, st.Apply.Stages[stage].Name)
			}
		}
	}
	if f, ok := takeStageFault(&s.faults.ApplyTimeouts, st.Type, n); ok {
		sp := &st.Apply.Stages[f.StageID].Steps[0]
		sp.duration = sp.Timeout + time.Second
	}
}

// findStep is the stage and step index of the first step named name, or
// -1 when the phase has none.
func findStep(p Phase, name string) (int, int) {
	for i, sg := range p.Stages {
		for j, sp := range sg.Steps {
			if sp.Name == name {
				return i, j
			}
		}
	}
	return -1, 0
}
