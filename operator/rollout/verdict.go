// Package rollout decides, from observed objects only, whether a Deployment
// is fully rolled out: the new template runs everywhere and every old pod is
// gone. It holds no client and no clock.
//
// A failure is judged only on evidence about the current template: a
// ProgressDeadlineExceeded condition whose message names another
// ReplicaSet, a ReplicaFailure lifted from an old ReplicaSet, and failing
// pods of an older pod-template-hash are ignored (see deploymentFailure for
// the real controller's window that makes this necessary).
package rollout

import "fmt"

// State is the outcome of an assessment.
type State string

const (
	// Rolled: the generation is observed, every counter agrees with
	// spec.replicas, and no pod of an old template, nor any terminating pod,
	// exists.
	Rolled State = "Rolled"
	// Progressing: the rollout is under way (or not yet observed); look again
	// on the next watch event.
	Progressing State = "Progressing"
	// Failed: the rollout cannot finish without a change (bad image, crash
	// loop, progress deadline exceeded, replica creation failing).
	Failed State = "Failed"
)

// Reasons are CamelCase, stable, and suitable for a Condition's reason.
const (
	ReasonGenerationNotObserved  = "GenerationNotObserved"
	ReasonReplicasNotUpdated     = "ReplicasNotUpdated"
	ReasonOldReplicasPending     = "OldReplicasPending"
	ReasonReplicasNotAvailable   = "ReplicasNotAvailable"
	ReasonTerminatingReplicas    = "TerminatingReplicas"
	ReasonNewReplicaSetNotFound  = "NewReplicaSetNotFound"
	ReasonOldPodsExist           = "OldPodsExist"
	ReasonPodsTerminating        = "PodsTerminating"
	ReasonProgressDeadlineExceed = "ProgressDeadlineExceeded"
	ReasonReplicaFailure         = "ReplicaFailure"
	ReasonPodFailing             = "PodFailing"
	ReasonRolled                 = "RolledOut"
	ReasonDeploymentPaused       = "DeploymentPaused"
	ReasonDeploymentBeingDeleted = "DeploymentBeingDeleted"
	ReasonNewPodsNotCreated      = "NewPodsNotCreated"
)

// Verdict is the result of Assess: a state, a stable reason and a message
// for humans (naming counts, pods and container reasons).
type Verdict struct {
	State   State
	Reason  string
	Message string
}

func progressing(reason, format string, args ...any) Verdict {
	return Verdict{State: Progressing, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

func failed(reason, format string, args ...any) Verdict {
	return Verdict{State: Failed, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// String renders "State/Reason: message".
func (v Verdict) String() string { return string(v.State) + "/" + v.Reason + ": " + v.Message }
