// Package deploy decides the next move of the platform Upgrade controller.
// It is pure: Next takes the `system` Upgrade, the live system as the
// controller observed it this reconcile (Live) and the time, and returns at
// most one VIM action, the status to write, the events to emit and when to
// look again. No client, no clock, nothing remembered between calls.
//
// The current step is never read from a stored plan: every call plans
// again from the live system (plan.Compute from the running release to
// spec.release) and takes the first step, unless the VIM holds a strategy
// that belongs to this deployment (its target is the first step, or a
// step the live system has already reached while its strategy finishes),
// which then is the current step. status.activeDeploy records what was
// observed (from/to, start, the step last seen deploying) for users, the
// webhook and the step-completed events; it never decides an action.
package deploy

import (
	"time"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/platform/release"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

// Strategy is the VIM strategy the controller observed (the VIM holds at
// most one, of any type).
type Strategy struct {
	// Kind is sw-deploy (the VIM's sw-upgrade strategy) or kube-upgrade.
	Kind plan.Kind
	UUID string
	// State is the strategy state (building, ready-to-apply, applying, ...).
	State vim.StrategyState
	// Target is the release id (sw-deploy) or Kubernetes version
	// (kube-upgrade) it deploys; "" for a kube-upgrade whose build has not
	// planned its stages yet (the VIM does not echo to-version).
	Target string
	// Progress is the seed's form, "apply(69%)/stg:(3/4) kube-upgrade-complete".
	Progress string
	// Reason is the current phase's reason: why a build or apply failed.
	Reason string
	// Rollback marks a sw-upgrade strategy created with "rollback": true
	// (it names no release; its release-id is the release rolled back):
	// nfv SwUpgradeStrategy._build_complete_rollback. Target is then the
	// release being rolled back.
	Rollback bool
	// ApplyFailed: the apply phase failed or timed out (its result is
	// failed or timed-out: nfv_common strategy Strategy.is_apply_failed /
	// is_apply_timed_out). The VIM then runs an abort phase of its own
	// (Strategy.phase_complete calls _abort: apply-failed → aborting →
	// aborted, abort-failed or abort-timeout), so the state alone does not
	// tell an apply failure from an abort.
	ApplyFailed bool
	// ApplyTimedOut: of those, the apply phase timed out.
	ApplyTimedOut bool
}

// USMDeploy is USM's deploy record (GET /v1/deploy): releases as
// "MM.mm.P", State one of software/states.py DEPLOY_STATES.
type USMDeploy struct {
	From, To, State string
}

// Removal reports a patch removal: a deploy to an older release of the
// running major (starlingx/update software_controller.py
// _validate_releases_for_select: a target below the highest release is
// removed, not applied). USM neither aborts it ("Abort operation is not
// supported in patch removal": software_deploy_abort_api) nor deletes it
// before it completed ("Delete is not supported while removing a
// release": software_deploy_delete_api), and a VIM rollback strategy
// needs a deploying release, so only finishing it frees the system.
func (d USMDeploy) Removal() bool {
	from, err1 := release.ParseID("starlingx-" + d.From)
	to, err2 := release.ParseID("starlingx-" + d.To)
	return err1 == nil && err2 == nil && from.SameMajor(to) && to.Compare(from) < 0
}

// Live is the StarlingX system as observed in one reconcile.
type Live struct {
	// Mode is sysinv's system_mode.
	Mode v1alpha1.SystemMode
	// Running is the running composite release. Its Kubernetes version is
	// the active one, or the version a kube upgrade in progress started
	// from while control planes and kubelets are mixed.
	Running release.Composite
	// Products are the uploaded product releases (USM), sorted by id.
	Products []v1alpha1.UploadedProductRelease
	// Kubes are the Kubernetes versions (sysinv), sorted by version.
	Kubes []v1alpha1.UploadedK8sVersion
	// ActiveController is the active controller's hostname ("" unknown).
	ActiveController string
	// DeployInProgress is USM's deploy in progress ("from → to", "" none).
	DeployInProgress string
	// Deploy is the same record, nil when USM has none.
	Deploy *USMDeploy
	// KubeUpgradeInProgress is sysinv's kube upgrade in progress
	// ("from → to (state)", "" none). An upgrade-aborted record is not in
	// progress: the next kube-upgrade strategy's build deletes it (nfv
	// KubeUpgradeCleanupAbortedStep).
	KubeUpgradeInProgress string
	// Strategy is the VIM's strategy, nil when it holds none.
	Strategy *Strategy
	// Skipped names the USM releases and requires entries the planner
	// cannot use (another component, an id USM's form does not fit), one
	// line each; reported as a warning, never a failed observation.
	Skipped []string
}

// Input is everything Next decides from.
type Input struct {
	// Upgrade is the stored `system` Upgrade (spec, status, generation).
	Upgrade *v1alpha1.Upgrade
	// Live is this reconcile's observation of the system.
	Live Live
	// Now stamps durations, start times and conditions.
	Now time.Time
	// MaxBuildRetries bounds the automatic re-creations of a strategy whose
	// build failed; 0 means DefaultMaxBuildRetries.
	MaxBuildRetries int
}

// DefaultMaxBuildRetries is how often a failed build is retried by default.
const DefaultMaxBuildRetries = 3

// ActionKind is the one VIM write of a reconcile.
type ActionKind string

// The actions.
const (
	ActNone   ActionKind = ""
	ActCreate ActionKind = "create" // create the strategy for Action.Step
	ActApply  ActionKind = "apply"  // apply-all Action.UUID
	ActAbort  ActionKind = "abort"  // abort Action.UUID
	ActDelete ActionKind = "delete" // delete Action.UUID (Force while building)
	ActSwact  ActionKind = "swact"  // swact away from Action.Host
	// ActRollback creates a sw-upgrade strategy with "rollback": true: the
	// VIM's way to revert a USM deploy (sw-deploy-abort,
	// sw-deploy-activate-rollback, host rollback, deploy-delete).
	ActRollback ActionKind = "rollback"
)

// Action is the VIM write Next asks for.
type Action struct {
	Kind ActionKind
	// Step is the step whose strategy ActCreate creates.
	Step plan.DeployStep
	// Policy are the strategy options for ActCreate (spec.deployPolicy).
	Policy v1alpha1.DeployPolicy
	// StrategyKind and UUID name the strategy of apply, abort and delete.
	StrategyKind plan.Kind
	UUID         string
	// Force deletes a strategy that is still building.
	Force bool
	// Host is the active controller ActSwact swacts away from.
	Host string
}

// String names the action for logs: "create sw-deploy(starlingx-13.01.2)".
func (a Action) String() string {
	switch a.Kind {
	case ActNone:
		return "none"
	case ActCreate:
		return "create " + a.Step.String()
	case ActSwact:
		return "swact " + a.Host
	case ActRollback:
		return "create sw-deploy rollback"
	}
	return string(a.Kind) + " " + string(a.StrategyKind) + " " + a.UUID
}

// Requeue says when to look at the system again.
type Requeue int

// Requeue intervals; the controller maps them to durations.
const (
	// RequeueIdle: nothing runs; look again now and then (new uploads).
	RequeueIdle Requeue = iota
	// RequeueActive: a strategy runs; poll it.
	RequeueActive
	// RequeueSoon: an action changed the system; look again shortly.
	RequeueSoon
)

// Event is a Kubernetes event to emit once the status is written.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// The event reasons. DeployStarted, DeployStepCompleted, DeployCompleted
// and SwactInitiated are the seed's; the others say what went wrong.
const (
	ReasonDeployStarted       = "DeployStarted"
	ReasonDeployStepCompleted = "DeployStepCompleted"
	ReasonDeployCompleted     = "DeployCompleted"
	ReasonSwactInitiated      = "SwactInitiated"
	ReasonBuildRetry          = "DeployBuildRetry"
	ReasonBuildFailed         = "DeployBuildFailed"
	ReasonApplyFailed         = "DeployApplyFailed"
	ReasonDeployFailed        = "DeployFailed"
	ReasonAbortRequested      = "DeployAbortRequested"
	ReasonDeployAborted       = "DeployAborted"
	ReasonDeployStopped       = "DeployStopped"
	ReasonDeployRollback      = "DeployRollback"
	ReasonAbortRefused        = "DeployAbortRefused"
)

// Phase summarises a decision for the conditions.
type Phase string

// The phases.
const (
	PhaseIdle        Phase = "Idle"        // the system runs spec.release
	PhaseDeploying   Phase = "Deploying"   // a deployment runs
	PhaseAborting    Phase = "Aborting"    // an abort runs
	PhaseDryRun      Phase = "DryRun"      // a plan exists; dry run executes nothing
	PhaseStopped     Phase = "Stopped"     // stopped at spec.targetDeployStep
	PhaseBlocked     Phase = "Blocked"     // a strategy or deploy outside this plan holds the system
	PhaseBuildFailed Phase = "BuildFailed" // build failed beyond the retries
	PhaseApplyFailed Phase = "ApplyFailed" // the apply failed or timed out
	PhaseFailed      Phase = "Failed"      // the deployment cannot go on
	PhaseInvalid     Phase = "Invalid"     // no plan reaches spec.release
	PhaseUnavailable Phase = "Unavailable" // the system did not answer (transient)
	PhaseVIMError    Phase = "VIMError"    // the system refused the operator (not transient)
)

// Decision is what Next decided.
type Decision struct {
	Action  Action
	Status  v1alpha1.UpgradeStatus
	Events  []Event
	Requeue Requeue
	Phase   Phase
	// Reason (CamelCase) and Message go into the conditions.
	Reason  string
	Message string
}
