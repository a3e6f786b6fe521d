package starlingx

import "time"

// CreateRequest carries a strategy's create parameters, already decoded
// (SwUpgradeStrategyCreateData / KubeUpgradeStrategyCreateData in nfv-vim
// api/controllers/v1/orchestration/sw_update/_sw_update_strategy.py).
type CreateRequest struct {
	Type                   StrategyType
	ControllerApplyType    ApplyType // kube-upgrade default serial
	StorageApplyType       ApplyType
	WorkerApplyType        ApplyType
	MaxParallelWorkerHosts int    // 2..10; 0 = default 2
	DefaultInstanceAction  string // stop-start | migrate
	AlarmRestrictions      string // strict (default) | relaxed | permissive

	// sw-upgrade only.
	Releases         []string // release ids; the model deploys exactly one
	Rollback         bool     // not modelled: the build fails
	Delete           bool     // add the sw-deploy-delete stage
	Snapshot         bool     // accepted, no effect
	Cleanup          bool     // not modelled: the build fails
	PreUpgradeDeploy bool     // accepted, no effect
	KubeUpgrade      string   // combined sw + kube upgrade: not modelled, the build fails

	// kube-upgrade only.
	ToVersion string // "v1.34.1"
}

// Strategy is the VIM's strategy object (nfv_common/strategy/_strategy.py
// as_dict, rendered by SwUpdateStrategyQueryData.convert_strategy).
type Strategy struct {
	UUID         string
	Type         StrategyType
	State        StrategyState
	CurrentPhase PhaseName
	Request      CreateRequest
	ReleaseID    string // sw-upgrade: the release the build resolved ("release-id")
	Build        Phase
	Apply        Phase
	Abort        Phase

	buildFault string // "", "fail" or "timeout": decided at create
	// abortPlan is the abort phase's stages, built when the abort action
	// arrives (Strategy._abort builds them from the running stage and
	// step at that moment); nil until then.
	abortPlan []Stage
}

// CurrentPhaseCompletion is "current-phase-completion-percentage".
func (st *Strategy) CurrentPhaseCompletion() int {
	switch st.CurrentPhase {
	case PhaseBuild:
		return st.Build.CompletionPercentage()
	case PhaseApply:
		return st.Apply.CompletionPercentage()
	case PhaseAbort:
		return st.Abort.CompletionPercentage()
	}
	return 0
}

func (st *Strategy) phase(name PhaseName) *Phase {
	switch name {
	case PhaseBuild:
		return &st.Build
	case PhaseApply:
		return &st.Apply
	case PhaseAbort:
		return &st.Abort
	}
	return nil
}

// Phase is one of build / apply / abort (nfv_common/strategy/_strategy_phase.py).
type Phase struct {
	Name         PhaseName
	Timeout      time.Duration // sum of the stage timeouts + 1s
	Stages       []Stage
	CurrentStage int // index of the running stage; == len(Stages) when done
	StopAtStage  int // apply-stage stops here; len(Stages) for apply-all
	InProgress   bool
	Result       Result
	Reason       string
	Response     string
	Start, End   time.Time // zero when not started / not ended

	aborting bool // an abort arrived; stop after the running step
}

// CompletionPercentage mirrors StrategyPhase.completion_percentage: 100
// unless in progress, then finished steps over all steps.
func (p *Phase) CompletionPercentage() int {
	if !p.InProgress {
		return 100
	}
	done, total := 0, 0
	for _, st := range p.Stages {
		for _, sp := range st.Steps {
			if sp.Result.done() {
				done++
			}
			total++
		}
	}
	if total == 0 {
		return 100
	}
	return done * 100 / total
}

// Stage is a named group of steps (nfv_common/strategy/_strategy_stage.py).
type Stage struct {
	ID          int
	Name        string
	Timeout     time.Duration // sum of the step timeouts + 1s
	Steps       []Step
	CurrentStep int
	InProgress  bool
	Result      Result
	Reason      string
	Start, End  time.Time

	abortable bool   // false for stages the VIM refuses to abort during
	doneState string // kube_upgrade state this stage reaches (resume)
}

// Step is one action on zero or more hosts (nfv_common/strategy/_strategy_step.py).
type Step struct {
	ID          int
	Name        string
	Timeout     time.Duration
	EntityType  string // "hosts" for host steps, "" otherwise
	EntityUUIDs []string
	EntityNames []string
	Result      Result
	Reason      string
	Start, End  time.Time

	duration time.Duration // model time the step takes
	effect   effect        // what completing it does to the system
	fail     string        // injected failure reason, "" = none
}

func (st *Strategy) clone() Strategy {
	c := *st
	c.Request.Releases = append([]string(nil), st.Request.Releases...)
	c.Build = st.Build.clone()
	c.Apply = st.Apply.clone()
	c.Abort = st.Abort.clone()
	return c
}

func (p Phase) clone() Phase {
	stages := make([]Stage, len(p.Stages))
	for i, st := range p.Stages {
		steps := make([]Step, len(st.Steps))
		for j, sp := range st.Steps {
			sp.EntityUUIDs = append([]string(nil), sp.EntityUUIDs...)
			sp.EntityNames = append([]string(nil), sp.EntityNames...)
			steps[j] = sp
		}
		st.Steps = steps
		stages[i] = st
	}
	p.Stages = stages
	return p
}

// newPhase numbers the stages and steps and computes the timeouts.
func newPhase(name PhaseName, stages []Stage) Phase {
	p := Phase{Name: name, Stages: stages, Result: ResultInitial}
	for i := range p.Stages {
		st := &p.Stages[i]
		st.ID = i
		st.Result = ResultInitial
		var t time.Duration
		for j := range st.Steps {
			sp := &st.Steps[j]
			sp.ID = j
			sp.Result = ResultInitial
			t += sp.Timeout
		}
		st.Timeout = t + time.Second
		p.Timeout += st.Timeout
	}
	if len(p.Stages) > 0 {
		p.Timeout += time.Second
	}
	p.StopAtStage = len(p.Stages)
	return p
}
