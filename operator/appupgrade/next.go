package appupgrade

import (
	"fmt"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// Reasons recorded in conditions and events.
const (
	ReasonSpecChanged        = "SpecChanged"
	ReasonValidated          = "ReferencesValid"
	ReasonConfigError        = "ConfigurationError"
	ReasonWorkerPatched      = "WorkerPatched"
	ReasonWorkerAtTarget     = "WorkerAlreadyAtTarget"
	ReasonWorkerRolling      = "WorkerRolling"
	ReasonWorkerRolledOut    = "WorkerRolledOut"
	ReasonWorkerChanged      = "WorkerImageChanged"
	ReasonAPIPatched         = "APIPatched"
	ReasonAPIAtTarget        = "APIAlreadyAtTarget"
	ReasonAPIRolling         = "APIRolling"
	ReasonAPIChanged         = "APIImageChanged"
	ReasonCompleted          = "Completed"
	ReasonWorkerRolloutFail  = "WorkerRolloutFailed"
	ReasonAPIRolloutFail     = "APIRolloutFailed"
	ReasonWorkerNoLongerDone = "WorkerNoLongerRolledOut"
	ReasonDeploymentClaimed  = "DeploymentClaimed"
	ReasonWriteNotObserved   = "WriteNotObservedYet"
)

// Next returns the one step to take from s. It mirrors the seed's state
// machine
//
//	Pending -> UpgradingWorkers -> WaitingForWorkers -> UpgradingAPI -> WaitingForAPI -> Completed
//	                                                                                   \-> Failed
//
// with every guard re-derived from observed state, so a restarted operator
// with a cold cache takes the same decision. The API image is written only
// from UpgradingAPI and only when the worker's rollout verdict is Rolled at
// that very reconcile. A spec change (generation ahead of
// status.observedGeneration) restarts at Pending, also from Completed and
// Failed; otherwise Completed and Failed are terminal.
func Next(s State) Step {
	u := s.Upgrade
	phase := u.Status.Phase
	if u.Generation != u.Status.ObservedGeneration && phase != "" {
		return Step{Phase: upgradesv1alpha1.PhasePending, Reason: ReasonSpecChanged,
			Message: fmt.Sprintf("Spec changed (generation %d): starting over", u.Generation)}
	}
	if phase.Terminal() {
		return Step{Phase: phase, Reason: terminalReason(u), Message: u.Status.Message}
	}
	if step, bad := configFailure(s); bad && phase != "" {
		return step
	}
	if s.ClaimedBy != "" && phase != "" {
		return Step{Phase: phase, Reason: ReasonDeploymentClaimed,
			Message: "Held: a referenced Deployment is being upgraded by ApplicationUpgrade " + s.ClaimedBy + "; this one starts when that one is Completed or Failed, or is deleted"}
	}
	switch phase {
	case "":
		return Step{Phase: upgradesv1alpha1.PhasePending, Reason: ReasonSpecChanged, Message: "Validating references"}
	case upgradesv1alpha1.PhasePending:
		return Step{Phase: upgradesv1alpha1.PhaseUpgradingWorkers, Reason: ReasonValidated,
			Message: "References valid: upgrading worker " + s.Worker.Key.String()}
	case upgradesv1alpha1.PhaseUpgradingWorkers:
		return upgradeWorker(s)
	case upgradesv1alpha1.PhaseWaitingForWorkers:
		return waitForWorker(s)
	case upgradesv1alpha1.PhaseUpgradingAPI:
		return upgradeAPI(s)
	case upgradesv1alpha1.PhaseWaitingForAPI:
		return waitForAPI(s)
	}
	return Step{Phase: upgradesv1alpha1.PhasePending, Reason: ReasonSpecChanged,
		Message: fmt.Sprintf("Unknown phase %q: starting over", phase)}
}

func terminalReason(u *upgradesv1alpha1.ApplicationUpgrade) string {
	for _, c := range u.Status.Conditions {
		if c.Type == upgradesv1alpha1.ConditionReady {
			return c.Reason
		}
	}
	return string(u.Status.Phase)
}

// configFailure turns a terminal configuration problem of either component
// into Failed; the worker is reported first.
func configFailure(s State) (Step, bool) {
	for _, o := range []Observed{s.Worker, s.API} {
		if o.ConfigError != nil {
			return Step{Phase: upgradesv1alpha1.PhaseFailed, Reason: ReasonConfigError,
				Message: fmt.Sprintf("%s: %v", o.Name, o.ConfigError)}, true
		}
	}
	return Step{}, false
}

func upgradeWorker(s State) Step {
	w := s.Worker
	if w.AtTarget() {
		return Step{Phase: upgradesv1alpha1.PhaseWaitingForWorkers, Reason: ReasonWorkerAtTarget,
			Message: "Worker already at " + w.Spec.Image + ": waiting for worker rollout to complete"}
	}
	return Step{Phase: upgradesv1alpha1.PhaseWaitingForWorkers, Reason: ReasonWorkerPatched,
		Message: "Waiting for worker rollout to complete",
		Write:   &ImageWrite{Component: Worker, Deployment: w.Key, Container: w.Container, Image: w.Spec.Image}}
}

func waitForWorker(s State) Step {
	w := s.Worker
	if !w.AtTarget() && writeNotObserved(w, s.Upgrade.Status.Worker.WrittenGeneration) {
		return Step{Phase: upgradesv1alpha1.PhaseWaitingForWorkers, Reason: ReasonWriteNotObserved,
			Message: fmt.Sprintf("Waiting to observe the worker write (deployment generation %d)", s.Upgrade.Status.Worker.WrittenGeneration)}
	}
	if !w.AtTarget() {
		return Step{Phase: upgradesv1alpha1.PhaseUpgradingWorkers, Reason: ReasonWorkerChanged,
			Message: fmt.Sprintf("Worker image is %s, not %s: writing it again", w.Image, w.Spec.Image)}
	}
	switch w.Rollout.State {
	case rollout.Failed:
		return Step{Phase: upgradesv1alpha1.PhaseFailed, Reason: ReasonWorkerRolloutFail,
			Message: fmt.Sprintf("Worker %s rollout failed: %s", w.Key, w.Rollout.Message)}
	case rollout.Rolled:
		return Step{Phase: upgradesv1alpha1.PhaseUpgradingAPI, Reason: ReasonWorkerRolledOut,
			Message: "Worker rolled out, every old worker pod gone: upgrading API " + s.API.Key.String()}
	}
	return Step{Phase: upgradesv1alpha1.PhaseWaitingForWorkers, Reason: ReasonWorkerRolling,
		Message: "Waiting for worker rollout to complete: " + w.Rollout.Message}
}

// upgradeAPI writes the API image only when the worker is still at its
// target and Rolled in this very observation.
func upgradeAPI(s State) Step {
	w, a := s.Worker, s.API
	if !w.AtTarget() || w.Rollout.State != rollout.Rolled {
		return Step{Phase: upgradesv1alpha1.PhaseWaitingForWorkers, Reason: ReasonWorkerNoLongerDone,
			Message: "Worker no longer rolled out: " + describe(w)}
	}
	if a.AtTarget() {
		return Step{Phase: upgradesv1alpha1.PhaseWaitingForAPI, Reason: ReasonAPIAtTarget,
			Message: "API already at " + a.Spec.Image + ": waiting for API rollout to complete"}
	}
	return Step{Phase: upgradesv1alpha1.PhaseWaitingForAPI, Reason: ReasonAPIPatched,
		Message: "Waiting for API rollout to complete",
		Write:   &ImageWrite{Component: API, Deployment: a.Key, Container: a.Container, Image: a.Spec.Image}}
}

func waitForAPI(s State) Step {
	a := s.API
	if !a.AtTarget() && writeNotObserved(a, s.Upgrade.Status.API.WrittenGeneration) {
		return Step{Phase: upgradesv1alpha1.PhaseWaitingForAPI, Reason: ReasonWriteNotObserved,
			Message: fmt.Sprintf("Waiting to observe the API write (deployment generation %d)", s.Upgrade.Status.API.WrittenGeneration)}
	}
	if !a.AtTarget() {
		return Step{Phase: upgradesv1alpha1.PhaseUpgradingAPI, Reason: ReasonAPIChanged,
			Message: fmt.Sprintf("API image is %s, not %s: writing it again", a.Image, a.Spec.Image)}
	}
	switch a.Rollout.State {
	case rollout.Failed:
		return Step{Phase: upgradesv1alpha1.PhaseFailed, Reason: ReasonAPIRolloutFail,
			Message: fmt.Sprintf("API %s rollout failed: %s", a.Key, a.Rollout.Message)}
	case rollout.Rolled:
		return Step{Phase: upgradesv1alpha1.PhaseCompleted, Reason: ReasonCompleted,
			Message: "Upgrade completed: worker and API rolled out"}
	}
	return Step{Phase: upgradesv1alpha1.PhaseWaitingForAPI, Reason: ReasonAPIRolling,
		Message: "Waiting for API rollout to complete: " + a.Rollout.Message}
}

func describe(o Observed) string {
	if !o.AtTarget() {
		return fmt.Sprintf("image is %s, want %s", o.Image, o.Spec.Image)
	}
	return o.Rollout.Message
}

// writeNotObserved reports whether the Deployment read is older than the
// operator's own last write to it (a lagging cache): going back to the
// Upgrading phase then would be a flap, and the write it would attempt
// fails its optimistic lock anyway.
func writeNotObserved(o Observed, written int64) bool {
	return o.Deployment != nil && written > 0 && o.Deployment.Generation < written
}
