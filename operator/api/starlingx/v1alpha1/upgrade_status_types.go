package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeployStatus is the state of the active deployment.
// +kubebuilder:validation:Enum=None;Deploying;Unknown;Build Failed;Apply Failed;Failed
type DeployStatus string

// The deploy statuses, as `kubectl get upgrade` shows them.
const (
	DeployStatusNone        DeployStatus = "None"
	DeployStatusDeploying   DeployStatus = "Deploying"
	DeployStatusUnknown     DeployStatus = "Unknown"
	DeployStatusBuildFailed DeployStatus = "Build Failed"
	DeployStatusApplyFailed DeployStatus = "Apply Failed"
	DeployStatusFailed      DeployStatus = "Failed"
)

// ActiveDeploy is the deployment in progress (or the last one).
type ActiveDeploy struct {
	// Status is None, Deploying, Unknown, Build Failed, Apply Failed or Failed.
	// +optional
	Status DeployStatus `json:"status,omitempty"`

	// DeployFromRelease is the composite release (`<product> / <k8s>`)
	// running when the deployment started; setting spec.release back to it
	// aborts the deployment.
	// +optional
	DeployFromRelease string `json:"deployFromRelease,omitempty"`

	// DeployToRelease is the composite target release.
	// +optional
	DeployToRelease string `json:"deployToRelease,omitempty"`

	// ReleaseDeploying is the current step's target: a product release id
	// (starlingx-27.03.0) or `k8s-<version>` (k8s-v1.34.1).
	// +optional
	ReleaseDeploying string `json:"releaseDeploying,omitempty"`

	// ReleaseDeployingStatus is the current VIM strategy's progress, e.g.
	// `apply(69%)/stg:(3/4) kube-upgrade-complete` (phase, completion
	// percentage, stage number/total, stage name).
	// +optional
	ReleaseDeployingStatus string `json:"releaseDeployingStatus,omitempty"`

	// StatusReason explains a failed or unknown status.
	// +optional
	StatusReason string `json:"statusReason,omitempty"`

	// TimeDuration is the time since TimeStart, `[h:]mm:ss`.
	// +optional
	TimeDuration string `json:"timeDuration,omitempty"`

	// TimeStart is when the deployment started, RFC 3339 UTC.
	// +optional
	TimeStart string `json:"timeStart,omitempty"`

	// BuildRetries counts the automatic re-creations of the current step's
	// strategy after a failed build (build-failed / build-timeout); reset
	// when the step changes or a new deployment starts.
	// +optional
	BuildRetries int32 `json:"buildRetries,omitempty"`
}

// DeployStepType is the kind of a planned step: which VIM strategy runs it.
// +kubebuilder:validation:Enum=sw-deploy;kube-upgrade
type DeployStepType string

// The step types.
const (
	DeployStepSwDeploy    DeployStepType = "sw-deploy"
	DeployStepKubeUpgrade DeployStepType = "kube-upgrade"
)

// DeployPlanStep is one planned step.
type DeployPlanStep struct {
	// Type is sw-deploy (a VIM sw-upgrade strategy) or kube-upgrade.
	Type DeployStepType `json:"type"`

	// Target is the step's product release id (sw-deploy) or Kubernetes
	// version (kube-upgrade).
	Target string `json:"target"`

	// Reason says why the plan needs this step.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Check says what the system checks only when the step starts, because
	// nothing it exposes earlier can tell: a major release's Kubernetes
	// versions ("checked at precheck": the USM deploy precheck reads the
	// release's feed), or Kubernetes versions a planned release brings.
	// +optional
	Check string `json:"check,omitempty"`
}

// DeployPlan is the computed plan for the current spec.release.
type DeployPlan struct {
	// DryRun is true when the plan was computed for a dry run only.
	DryRun bool `json:"dryRun"`

	// FromRelease is the composite release the plan starts from.
	// +optional
	FromRelease string `json:"fromRelease,omitempty"`

	// ToRelease is the composite release the plan ends at.
	// +optional
	ToRelease string `json:"toRelease,omitempty"`

	// ValidationResult is `OK`, or why no plan can reach spec.release.
	// +optional
	ValidationResult string `json:"validationResult,omitempty"`

	// DeploySteps are the steps, in order.
	// +optional
	// +listType=atomic
	DeploySteps []DeployPlanStep `json:"deploySteps,omitempty"`
}

// ProductReleaseState is USM's release state (starlingx/update
// software/software/states.py VALID_RELEASE_STATES plus DEPLOYED_PARTIAL);
// "" when USM reports a release without a state (componentized releases).
// +kubebuilder:validation:Enum=uploading;upload-failed;available;unavailable;deploying;deployed;removing;committed;deployed-partial
type ProductReleaseState string

// UploadedProductRelease is one release known to USM (GET /v1/release).
type UploadedProductRelease struct {
	// ReleaseID is USM's release_id, `starlingx-MM.mm[.pp]`.
	ReleaseID string `json:"releaseId"`

	// State is USM's release state ("" when USM reports none).
	// +optional
	State ProductReleaseState `json:"state,omitempty"`

	// Requires are the release ids that must be deployed before this one
	// (USM's requires; for a major release its required patch).
	// +optional
	// +listType=atomic
	Requires []string `json:"requires,omitempty"`

}

// K8sVersionState is sysinv's Kubernetes version state.
// +kubebuilder:validation:Enum=active;available;partial;unavailable
type K8sVersionState string

// UploadedK8sVersion is one Kubernetes version known to sysinv (GET /v1/kube_versions).
type UploadedK8sVersion struct {
	// Version is the Kubernetes version, e.g. v1.34.1.
	Version string `json:"version"`

	// State is active (running), available, partial (running on some
	// nodes) or unavailable.
	State K8sVersionState `json:"state"`

	// UpgradeFrom are the versions this one can be upgraded from in one step.
	// +optional
	// +listType=atomic
	UpgradeFrom []string `json:"upgradeFrom,omitempty"`
}

// SystemMode is sysinv's system_mode. AIO-SX is `simplex`.
// +kubebuilder:validation:Enum=simplex;duplex;duplex-direct
type SystemMode string

// The system modes.
const (
	SystemModeSimplex      SystemMode = "simplex"
	SystemModeDuplex       SystemMode = "duplex"
	SystemModeDuplexDirect SystemMode = "duplex-direct"
)

// Condition types set on an Upgrade, kstatus style: Ready is True when the
// system runs spec.release; Progressing while a deployment runs; Stalled
// when a deployment failed or no plan reaches spec.release.
const (
	ConditionReady       = "Ready"
	ConditionProgressing = "Progressing"
	ConditionStalled     = "Stalled"
	// ConditionReleasesSkipped is True while USM lists releases (or
	// requires entries) the planner cannot use, named in its message.
	ConditionReleasesSkipped = "ReleasesSkipped"
)

// UpgradeStatus is what the operator observed on the live system and planned.
type UpgradeStatus struct {
	// Release is the running composite release, `<product> / <k8s>`, e.g.
	// `starlingx-13.01.0 / v1.34.1`.
	// +optional
	Release string `json:"release,omitempty"`

	// SystemMode is the observed system mode; the admission webhook reads
	// it (rollbackPolicy snapshot is AIO-SX only) and so does the planner
	// (duplex systems upgrade Kubernetes one minor version per step).
	// +optional
	SystemMode SystemMode `json:"systemMode,omitempty"`

	// ActiveDeploy is the deployment in progress, or the last one.
	// +optional
	ActiveDeploy ActiveDeploy `json:"activeDeploy,omitempty"`

	// DeployPlan is the plan computed for spec.release (on a dry run or a
	// spec change).
	// +optional
	DeployPlan DeployPlan `json:"deployPlan,omitempty"`

	// UploadedProductReleases are the product releases USM knows.
	// +optional
	// +listType=map
	// +listMapKey=releaseId
	UploadedProductReleases []UploadedProductRelease `json:"uploadedProductReleases,omitempty"`

	// UploadedK8sVersions are the Kubernetes versions sysinv knows.
	// +optional
	// +listType=map
	// +listMapKey=version
	UploadedK8sVersions []UploadedK8sVersion `json:"uploadedK8sVersions,omitempty"`

	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are Ready, Progressing and Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
