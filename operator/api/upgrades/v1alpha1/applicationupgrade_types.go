package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeploymentReference names a Deployment in the ApplicationUpgrade's own namespace.
type DeploymentReference struct {
	// Name of the Deployment (a DNS-1123 subdomain), in the ApplicationUpgrade's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// ComponentSpec is one component of the application: the Deployment that runs
// it, the image it should run, and which container of the pod template gets it.
type ComponentSpec struct {
	// DeploymentRef names the component's Deployment. Immutable: changing
	// which Deployment an upgrade drives mid-rollout has no sensible meaning.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="deploymentRef is immutable: which Deployment an upgrade drives cannot change once created; delete this ApplicationUpgrade and create a new one"
	DeploymentRef DeploymentReference `json:"deploymentRef"`

	// Image is the desired container image, e.g. registry.example.com/job-worker:v2.0.0.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:XValidation:rule="!self.contains(' ')",message="image must not contain spaces"
	Image string `json:"image"`

	// ContainerName selects the container of the pod template whose image is
	// upgraded (a DNS-1123 label). It may be omitted when the pod template has
	// exactly one container.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	ContainerName string `json:"containerName,omitempty"`
}

// ApplicationUpgradeSpec declares the desired images of a two-component
// application. The worker (callee) is always upgraded first; the API
// (caller) image is written only once every old worker pod is gone.
// +kubebuilder:validation:XValidation:rule="self.worker.deploymentRef.name != self.api.deploymentRef.name",message="spec.worker and spec.api must reference different Deployments"
type ApplicationUpgradeSpec struct {
	// Worker is the callee (Component B), upgraded first.
	Worker ComponentSpec `json:"worker"`

	// API is the caller (Component A), upgraded after the worker is fully rolled out.
	API ComponentSpec `json:"api"`
}

// Phase is where an ApplicationUpgrade has got to.
// +kubebuilder:validation:Enum=Pending;UpgradingWorkers;WaitingForWorkers;UpgradingAPI;WaitingForAPI;Completed;Failed
type Phase string

// The phases, in order. Completed and Failed are terminal for a generation of the spec.
const (
	PhasePending           Phase = "Pending"
	PhaseUpgradingWorkers  Phase = "UpgradingWorkers"
	PhaseWaitingForWorkers Phase = "WaitingForWorkers"
	PhaseUpgradingAPI      Phase = "UpgradingAPI"
	PhaseWaitingForAPI     Phase = "WaitingForAPI"
	PhaseCompleted         Phase = "Completed"
	PhaseFailed            Phase = "Failed"
)

// Terminal reports whether no further transition happens for the current generation.
func (p Phase) Terminal() bool { return p == PhaseCompleted || p == PhaseFailed }

// ComponentStatus is what the operator last observed on a component's Deployment.
type ComponentStatus struct {
	// Image is the image of the selected container in the Deployment's pod template.
	// +optional
	Image string `json:"image,omitempty"`

	// ShortImage is Image without its registry and repository path
	// ("job-worker:v2.0.0"), as kubectl get shows it.
	// +optional
	ShortImage string `json:"shortImage,omitempty"`

	// WrittenGeneration is the Deployment's metadata.generation right after
	// the operator's last image write to it. A read showing an older
	// generation is a cache that has not seen that write yet, not someone
	// reverting the image.
	// +optional
	WrittenGeneration int64 `json:"writtenGeneration,omitempty"`
}

// Condition types set on an ApplicationUpgrade. They follow kstatus: Ready is
// True only when Completed; Progressing is True while an upgrade runs; Stalled
// is True when Failed.
const (
	ConditionReady       = "Ready"
	ConditionProgressing = "Progressing"
	ConditionStalled     = "Stalled"
)

// ApplicationUpgradeStatus reports where the upgrade got to, derived from
// the observed Deployments and pods on every reconcile.
type ApplicationUpgradeStatus struct {
	// Phase is the current phase.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// PhaseStartTime is when the current phase was entered.
	// +optional
	PhaseStartTime *metav1.Time `json:"phaseStartTime,omitempty"`

	// Message is a human-readable explanation of the phase.
	// +optional
	Message string `json:"message,omitempty"`

	// Worker is the image observed on the worker Deployment.
	// +optional
	Worker ComponentStatus `json:"worker,omitempty"`

	// API is the image observed on the API Deployment.
	// +optional
	API ComponentStatus `json:"api,omitempty"`

	// ObservedGeneration is the metadata.generation of the spec this status
	// describes. It defaults to 0, so before the operator's first status
	// write kstatus (Flux health checks, kubectl wait) sees a generation not
	// yet observed — InProgress — rather than a status-less object it would
	// call Current. Serialized even when 0 (no omitempty), so the v1alpha1
	// view, which the conversion webhook writes and the API server does
	// not default again, carries it too.
	// +optional
	// +kubebuilder:default=0
	ObservedGeneration int64 `json:"observedGeneration"`

	// Conditions are Ready, Progressing and Stalled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ApplicationUpgrade upgrades a worker (callee) Deployment before an API
// (caller) Deployment, writing the API image only once every old worker pod is gone.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=appupgrade;aup
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Worker",type=string,JSONPath=`.status.worker.shortImage`
// +kubebuilder:printcolumn:name="API",type=string,JSONPath=`.status.api.shortImage`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ApplicationUpgrade struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ApplicationUpgradeSpec `json:"spec,omitempty"`

	// Status defaults to {} so that its observedGeneration default applies.
	// +kubebuilder:default={}
	Status ApplicationUpgradeStatus `json:"status,omitempty"`
}

// ApplicationUpgradeList is a list of ApplicationUpgrades.
//
// +kubebuilder:object:root=true
type ApplicationUpgradeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ApplicationUpgrade `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ApplicationUpgrade{}, &ApplicationUpgradeList{})
}
