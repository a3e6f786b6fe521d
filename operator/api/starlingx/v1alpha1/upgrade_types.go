package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReleaseSpec is a composite release: a StarlingX product release and a
// Kubernetes version.
type ReleaseSpec struct {
	// Platform is the desired product release id, `starlingx-MM.mm.P`
	// (e.g. starlingx-13.01.0): MM.mm is the major release (USM's
	// sw_version), P the patch number. The parts compare numerically.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^starlingx-[0-9]+[.][0-9]+([.][0-9]+)?$')",message="must be a product release id starlingx-MM.mm[.pp] (USM's form), e.g. starlingx-13.01.0 or starlingx-27.03"
	Platform string `json:"platform"`

	// Kubernetes is the desired Kubernetes version, `vMAJOR.MINOR.PATCH`
	// (e.g. v1.34.1). When empty the plan keeps the running version, apart
	// from the steps a major upgrade needs.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^v[0-9]+[.][0-9]+[.][0-9]+$')",message="must be a Kubernetes version vMAJOR.MINOR.PATCH, e.g. v1.34.1"
	Kubernetes string `json:"kubernetes,omitempty"`
}

// AlarmRestriction is the VIM's `alarm-restrictions`: how strictly active
// alarms block a strategy.
// +kubebuilder:validation:Enum=strict;relaxed;permissive
type AlarmRestriction string

// The VIM's alarm restrictions.
const (
	AlarmRestrictionStrict     AlarmRestriction = "strict"
	AlarmRestrictionRelaxed    AlarmRestriction = "relaxed"
	AlarmRestrictionPermissive AlarmRestriction = "permissive"
)

// ApplyType is the VIM's `controller-apply-type` / `worker-apply-type`.
// +kubebuilder:validation:Enum=serial;parallel;ignore
type ApplyType string

// The VIM's apply types.
const (
	ApplyTypeSerial   ApplyType = "serial"
	ApplyTypeParallel ApplyType = "parallel"
	ApplyTypeIgnore   ApplyType = "ignore"
)

// InstanceAction is the VIM's `default-instance-action`: what happens to
// hosted instances while their host is upgraded.
// +kubebuilder:validation:Enum=stop-start;migrate
type InstanceAction string

// The VIM's instance actions.
const (
	InstanceActionStopStart InstanceAction = "stop-start"
	InstanceActionMigrate   InstanceAction = "migrate"
)

// RollbackPolicy says how a failed sw-deploy step is rolled back.
// `default` is USM's in-place rollback; `snapshot` asks the VIM for a
// snapshot (`snapshot: true` in the sw-upgrade create body) and is only
// allowed on AIO-SX (simplex) systems.
// +kubebuilder:validation:Enum=default;snapshot
type RollbackPolicy string

// The rollback policies.
const (
	RollbackPolicyDefault  RollbackPolicy = "default"
	RollbackPolicySnapshot RollbackPolicy = "snapshot"
)

// DeployPolicy are the strategy options passed to the VIM for every step.
type DeployPolicy struct {
	// DryRun computes status.deployPlan and executes nothing.
	// +optional
	// +kubebuilder:default=false
	DryRun bool `json:"dryRun,omitempty"`

	// AlarmRestriction is passed as the VIM's alarm-restrictions.
	// +optional
	// +kubebuilder:default=strict
	AlarmRestriction AlarmRestriction `json:"alarmRestriction,omitempty"`

	// ControllerApplyType is how controller hosts are upgraded by
	// sw-deploy steps. Kube-upgrade steps always upgrade controllers
	// serially: the real VIM refuses any other controller-apply-type for a
	// kube-upgrade strategy (starlingx/nfv _sw_update_strategy.py
	// KubeUpgradeStrategyAPI.post).
	// +optional
	// +kubebuilder:default=serial
	ControllerApplyType ApplyType `json:"controllerApplyType,omitempty"`

	// WorkerApplyType is how worker hosts are upgraded.
	// +optional
	// +kubebuilder:default=serial
	WorkerApplyType ApplyType `json:"workerApplyType,omitempty"`

	// MaxParallelWorkerHosts bounds a parallel worker apply (hosts at once,
	// 2..10 as the VIM accepts).
	// +optional
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=10
	MaxParallelWorkerHosts int32 `json:"maxParallelWorkerHosts,omitempty"`

	// InstanceAction is passed as the VIM's default-instance-action.
	// +optional
	// +kubebuilder:default=stop-start
	InstanceAction InstanceAction `json:"instanceAction,omitempty"`

	// RollbackPolicy is default or snapshot (AIO-SX only).
	// +optional
	// +kubebuilder:default=default
	RollbackPolicy RollbackPolicy `json:"rollbackPolicy,omitempty"`
}

// TargetDeployStep stops a deployment after a named step. `None` (or
// empty) runs the whole plan; `pre-upgrade-deploy` stops once the
// pre-upgrade deploy (the VIM's `pre-upgrade-deploy` option) is done.
// +kubebuilder:validation:Enum=None;pre-upgrade-deploy
type TargetDeployStep string

// The target deploy steps.
const (
	TargetDeployStepNone             TargetDeployStep = "None"
	TargetDeployStepPreUpgradeDeploy TargetDeployStep = "pre-upgrade-deploy"
)

// UpgradeSpec is the desired composite release and how to deploy it.
type UpgradeSpec struct {
	// Release is the desired product release and Kubernetes version.
	Release ReleaseSpec `json:"release"`

	// DeployPolicy are the VIM strategy options.
	// +optional
	// +kubebuilder:default={}
	DeployPolicy DeployPolicy `json:"deployPolicy,omitempty"`

	// TargetDeployStep stops the deployment after a named step.
	// +optional
	TargetDeployStep TargetDeployStep `json:"targetDeployStep,omitempty"`
}

// Upgrade declares the StarlingX product release and Kubernetes version the
// whole system should run. Only the singleton named `system` is admitted;
// the operator plans and drives the sw-deploy / kube-upgrade steps.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Release",type=string,JSONPath=`.status.release`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.activeDeploy.status`
// +kubebuilder:printcolumn:name="Duration",type=string,JSONPath=`.status.activeDeploy.timeDuration`
// +kubebuilder:printcolumn:name="Deploy-From",type=string,JSONPath=`.status.activeDeploy.deployFromRelease`
// +kubebuilder:printcolumn:name="Deploy-To",type=string,JSONPath=`.status.activeDeploy.deployToRelease`
// +kubebuilder:printcolumn:name="Deploying-Rel",type=string,JSONPath=`.status.activeDeploy.releaseDeploying`,priority=1
// +kubebuilder:printcolumn:name="Deploying-Rel-Status",type=string,JSONPath=`.status.activeDeploy.releaseDeployingStatus`,priority=1
type Upgrade struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired composite release.
	// +required
	Spec UpgradeSpec `json:"spec"`

	// Status is what the operator observed and planned.
	// +optional
	Status UpgradeStatus `json:"status,omitempty"`
}

// UpgradeList is a list of Upgrades.
//
// +kubebuilder:object:root=true
type UpgradeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Upgrade `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Upgrade{}, &UpgradeList{})
}
