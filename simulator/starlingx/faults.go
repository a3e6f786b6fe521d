package starlingx

// Faults are failures injected into the next strategies, as data. Counters
// and stage faults are consumed when they fire, so a fault schedule replays
// exactly.
type Faults struct {
	// BuildFailures makes the next N builds end build-failed: the last step
	// of the build phase (sw-deploy-precheck or query-kube-host-upgrade)
	// fails with BuildFailReason.
	BuildFailures int
	// BuildFailReason is the step reason of an injected build failure;
	// default "injected build failure".
	BuildFailReason string
	// BuildTimeouts makes the next N builds end build-timeout: the last
	// build step runs past its timeout.
	BuildTimeouts int
	// ApplyFailures fail the first step of a stage of the next applied
	// strategies (apply-failed); each entry fires once.
	ApplyFailures []StageFault
	// ApplyTimeouts make the first step of a stage run past its timeout
	// (apply-timeout); each entry fires once.
	ApplyTimeouts []StageFault
}

// StageFault names an apply stage by its stage-id (0-based, as on the wire)
// and optionally the strategy type it applies to ("" = either).
type StageFault struct {
	StageID int
	Type    StrategyType
	Reason  string // step reason; default "injected apply failure"
	// Step, when set, names the step that fails instead: the first step of
	// that name in the apply phase (StageID is then ignored).
	Step string
}

func (f Faults) clone() Faults {
	f.ApplyFailures = append([]StageFault(nil), f.ApplyFailures...)
	f.ApplyTimeouts = append([]StageFault(nil), f.ApplyTimeouts...)
	return f
}

// takeStageFault removes and returns the first fault matching typ whose
// stage exists in a phase of n stages.
func takeStageFault(list *[]StageFault, typ StrategyType, n int) (StageFault, bool) {
	for i, f := range *list {
		if (f.Type == "" || f.Type == typ) && (f.Step != "" || f.StageID >= 0 && f.StageID < n) {
			*list = append((*list)[:i:i], (*list)[i+1:]...)
			return f, true
		}
	}
	return StageFault{}, false
}
