package vim

import (
	"encoding/json"
	"fmt"
	"strings"
)

// StrategyType is the strategy name in the URL and in "name".
// The CLI's sw-deploy-strategy is "sw-upgrade" on the wire.
type StrategyType string

// Strategy types the operator drives.
const (
	StrategySwUpgrade   StrategyType = "sw-upgrade"
	StrategyKubeUpgrade StrategyType = "kube-upgrade"
)

// StrategyState is a strategy's "state" (nfv_common strategy STRATEGY_STATE).
type StrategyState string

// Strategy states.
const (
	StateInitial      StrategyState = "initial"
	StateBuilding     StrategyState = "building"
	StateBuildFailed  StrategyState = "build-failed"
	StateBuildTimeout StrategyState = "build-timeout"
	StateReadyToApply StrategyState = "ready-to-apply"
	StateApplying     StrategyState = "applying"
	StateApplyFailed  StrategyState = "apply-failed"
	StateApplyTimeout StrategyState = "apply-timeout"
	StateApplied      StrategyState = "applied"
	StateAborting     StrategyState = "aborting"
	StateAbortFailed  StrategyState = "abort-failed"
	StateAbortTimeout StrategyState = "abort-timeout"
	StateAborted      StrategyState = "aborted"
)

// Phase results the client reads (nfv_common strategy/_strategy_defs.py
// STRATEGY_PHASE_RESULT): an apply phase that failed or timed out, even
// after the VIM's own abort phase ran (Strategy.is_apply_failed).
const (
	ResultFailed   = "failed"
	ResultTimedOut = "timed-out"
)

// Terminal reports whether the strategy will not move on its own any more.
func (s StrategyState) Terminal() bool {
	switch s {
	case StateBuildFailed, StateBuildTimeout, StateApplied, StateApplyFailed, StateApplyTimeout,
		StateAbortFailed, StateAbortTimeout, StateAborted:
		return true
	}
	return false
}

// Busy reports the states in which a delete without force answers 409.
func (s StrategyState) Busy() bool {
	return s == StateBuilding || s == StateApplying || s == StateAborting
}

// Strategy is the VIM's strategy object: {"strategy": {...}} from GET,
// POST and the actions (SwUpdateStrategyData in nfv-vim
// api/controllers/v1/orchestration/sw_update/_sw_update_strategy.py).
// A kube-upgrade strategy does not carry its to-version; see KubeTarget.
type Strategy struct {
	UUID                             string        `json:"uuid"`
	Name                             StrategyType  `json:"name"`
	Release                          ReleaseList   `json:"release,omitempty"`    // sw-upgrade: the releases asked for
	ReleaseID                        string        `json:"release-id,omitempty"` // sw-upgrade: the release resolved by the build
	KubeVersion                      string        `json:"kube-version,omitempty"`
	ControllerApplyType              string        `json:"controller-apply-type"`
	StorageApplyType                 string        `json:"storage-apply-type"`
	SwiftApplyType                   string        `json:"swift-apply-type"`
	WorkerApplyType                  string        `json:"worker-apply-type"`
	MaxParallelWorkerHosts           int           `json:"max-parallel-worker-hosts"`
	DefaultInstanceAction            string        `json:"default-instance-action"`
	AlarmRestrictions                string        `json:"alarm-restrictions"`
	State                            StrategyState `json:"state"`
	CurrentPhase                     string        `json:"current-phase"` // initial, build, apply, abort
	CurrentPhaseCompletionPercentage int           `json:"current-phase-completion-percentage"`
	BuildPhase                       Phase         `json:"build-phase"`
	ApplyPhase                       Phase         `json:"apply-phase"`
	AbortPhase                       Phase         `json:"abort-phase"`
}

// Phase is a strategy phase. Dates are "YYYY-MM-DD HH:MM:SS" in the VIM
// host's local time, "" when unset; timeouts are seconds.
type Phase struct {
	PhaseName            string  `json:"phase-name"`
	Timeout              int     `json:"timeout"`
	TotalStages          int     `json:"total-stages"`
	CurrentStage         int     `json:"current-stage"` // index of the running stage; == total-stages when done
	StopAtStage          int     `json:"stop-at-stage"`
	Stages               []Stage `json:"stages"`
	InProgress           bool    `json:"inprogress"`
	CompletionPercentage int     `json:"completion-percentage"`
	Result               string  `json:"result"` // initial, inprogress, wait, success, degraded, failed, timed-out, aborted
	Reason               string  `json:"reason"`
	Response             string  `json:"response"`
	StartDateTime        string  `json:"start-date-time"`
	EndDateTime          string  `json:"end-date-time"`
}

// Stage is one stage of a phase.
type Stage struct {
	StageID       int    `json:"stage-id"`
	StageName     string `json:"stage-name"`
	Timeout       int    `json:"timeout"`
	TotalSteps    int    `json:"total-steps"`
	CurrentStep   int    `json:"current-step"`
	Steps         []Step `json:"steps"`
	InProgress    bool   `json:"inprogress"`
	Result        string `json:"result"`
	Reason        string `json:"reason"`
	StartDateTime string `json:"start-date-time"`
	EndDateTime   string `json:"end-date-time"`
}

// Step is one step of a stage.
type Step struct {
	StepID        int      `json:"step-id"`
	StepName      string   `json:"step-name"`
	Timeout       int      `json:"timeout"`
	EntityType    string   `json:"entity-type"`
	EntityUUIDs   []string `json:"entity-uuids"`
	EntityNames   []string `json:"entity-names"`
	Result        string   `json:"result"`
	Reason        string   `json:"reason"`
	StartDateTime string   `json:"start-date-time"`
	EndDateTime   string   `json:"end-date-time"`
}

// ReleaseList is the strategy's "release": a list of release ids in
// current VIMs, a single string in older ones; both decode.
type ReleaseList []string

// UnmarshalJSON accepts a list, a string or null.
func (r *ReleaseList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*r = nil
		if one != "" {
			*r = ReleaseList{one}
		}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("strategy release: want a string or a list of strings: %w", err)
	}
	*r = many
	return nil
}

// Phase returns the current phase (build, apply or abort).
func (s *Strategy) Phase() *Phase {
	switch s.CurrentPhase {
	case "apply":
		return &s.ApplyPhase
	case "abort":
		return &s.AbortPhase
	}
	return &s.BuildPhase
}

// Progress is the seed's releaseDeployingStatus form,
// "apply(69%)/stg:(3/4) kube-upgrade-complete": current phase, its
// completion percentage, current-stage / total-stages and the name of the
// stage at current-stage (the last stage once all are done).
func (s *Strategy) Progress() string {
	p := s.Phase()
	name := ""
	if n := len(p.Stages); n > 0 {
		name = p.Stages[min(max(p.CurrentStage, 0), n-1)].StageName
	}
	return strings.TrimSpace(fmt.Sprintf("%s(%d%%)/stg:(%d/%d) %s", s.CurrentPhase, s.CurrentPhaseCompletionPercentage,
		p.CurrentStage, p.TotalStages, name))
}

// KubeTarget is the version a kube-upgrade strategy upgrades to, read from
// its per-version stage names ("kube-upgrade-kubelet v1.34.1"): the highest
// version named, or "" before the build planned the stages.
func (s *Strategy) KubeTarget() string {
	best := s.KubeVersion
	for _, st := range s.ApplyPhase.Stages {
		f := strings.Fields(st.StageName)
		if len(f) == 2 && strings.HasPrefix(f[1], "v") && (best == "" || versionLess(best, f[1])) {
			best = f[1]
		}
	}
	return best
}

// versionLess compares "vMAJ.MIN.PATCH" numerically.
func versionLess(a, b string) bool {
	var x, y [3]int
	fmt.Sscanf(strings.TrimPrefix(a, "v"), "%d.%d.%d", &x[0], &x[1], &x[2])
	fmt.Sscanf(strings.TrimPrefix(b, "v"), "%d.%d.%d", &y[0], &y[1], &y[2])
	for i := range x {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return false
}

// CurrentStrategy is GET /api/orchestration/current-strategy/strategy:
// the name and state of whichever strategy exists.
type CurrentStrategy struct {
	Name  StrategyType  `json:"name"`
	State StrategyState `json:"state"`
}
