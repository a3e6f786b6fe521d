package v1beta1

import (
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MaxComponents bounds spec.components (and each dependsOn list), so the
// admission rules' cost stays within the API server's CEL budget.
const MaxComponents = 32

// DeploymentReference names a Deployment.
type DeploymentReference struct {
	// Name of the Deployment (a DNS-1123 subdomain).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// Namespace of the Deployment; empty means the ApplicationUpgrade's own
	// namespace. Another namespace is refused unless the operator runs with
	// --allow-cross-namespace-refs (then the author's rights there are checked).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
}

// WorkloadKind is the kind of workload a component's image is written to.
// +kubebuilder:validation:Enum=Deployment;StatefulSet;DaemonSet
type WorkloadKind string

// The workload kinds a component may reference (all apps/v1).
const (
	KindDeployment  WorkloadKind = "Deployment"
	KindStatefulSet WorkloadKind = "StatefulSet"
	KindDaemonSet   WorkloadKind = "DaemonSet"
)

// Resource is the lowercase plural resource of k ("statefulsets"), as RBAC
// and SubjectAccessReviews name it; "" for an unknown kind.
func (k WorkloadKind) Resource() string {
	switch k {
	case KindDeployment:
		return "deployments"
	case KindStatefulSet:
		return "statefulsets"
	case KindDaemonSet:
		return "daemonsets"
	}
	return ""
}

// WorkloadReference names an apps/v1 workload of any supported kind.
type WorkloadReference struct {
	// Kind of the workload: Deployment, StatefulSet or DaemonSet.
	Kind WorkloadKind `json:"kind"`

	// Name of the workload (a DNS-1123 subdomain).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// Namespace of the workload; empty means the ApplicationUpgrade's own
	// namespace. Another namespace is refused unless the operator runs with
	// --allow-cross-namespace-refs (then the author's rights there are checked).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
}

// Component is one node of the dependency graph: a workload (a Deployment,
// StatefulSet or DaemonSet), the image it should run, and the components
// that must be fully rolled out (every old pod gone) before its image is
// written. Exactly one of deploymentRef and workloadRef names the workload;
// which one, and what it names, cannot change once created. (The rule
// holds per component name: replacing a component by one of another name
// that names another workload is a new component, and the author's right
// to patch that workload is checked again.)
// +kubebuilder:validation:XValidation:rule="!has(self.dependsOn) || !(self.name in self.dependsOn)",message="a component must not depend on itself: remove its own name from dependsOn"
// +kubebuilder:validation:XValidation:rule="has(self.deploymentRef) != has(self.workloadRef)",message="a component names its workload with exactly one of deploymentRef (a Deployment) and workloadRef (kind Deployment, StatefulSet or DaemonSet): set one and remove the other"
// +kubebuilder:validation:XValidation:rule="has(self.deploymentRef) == has(oldSelf.deploymentRef) && has(self.workloadRef) == has(oldSelf.workloadRef)",message="a component's workload reference is immutable: it cannot move between deploymentRef and workloadRef once created; delete this ApplicationUpgrade and create a new one"
type Component struct {
	// Name identifies the component within the upgrade (a DNS-1123 label),
	// e.g. "worker"; dependsOn entries refer to it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// DeploymentRef names the component's Deployment (the v1alpha1 form,
	// kept as is; workloadRef with kind Deployment says the same). Immutable: changing
	// which Deployment an upgrade drives mid-rollout has no sensible meaning.
	// Set exactly one of deploymentRef and workloadRef.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="deploymentRef is immutable: which Deployment an upgrade drives cannot change once created; delete this ApplicationUpgrade and create a new one"
	DeploymentRef DeploymentReference `json:"deploymentRef,omitzero"`

	// WorkloadRef names the component's workload by kind: a Deployment, a
	// StatefulSet or a DaemonSet. Immutable, like deploymentRef. Set
	// exactly one of deploymentRef and workloadRef.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="workloadRef is immutable: which workload an upgrade drives cannot change once created; delete this ApplicationUpgrade and create a new one"
	WorkloadRef *WorkloadReference `json:"workloadRef,omitempty"`

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

	// DependsOn names the components (callees) this one calls: its image is
	// written only after every one of them is fully rolled out.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	DependsOn []string `json:"dependsOn,omitempty"`
}

// ApplicationUpgradeSpec declares the desired images of an application's
// components and the order their callers and callees must follow. The schema
// checks names and unknown or self dependencies; cycles and the same
// Deployment referenced twice (which need the upgrade's namespace, and a
// pairwise comparison over the CEL cost budget) are refused by the
// validating webhook (appupgrade.Validate).
// +kubebuilder:validation:XValidation:rule="self.components.all(c, !has(c.dependsOn) || c.dependsOn.all(d, self.components.exists(x, x.name == d)))",message="every dependsOn entry must name a component in spec.components"
type ApplicationUpgradeSpec struct {
	// Components are the graph's nodes, each naming the components it depends on.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Components []Component `json:"components"`

	// ServiceAccountName is a ServiceAccount of the upgrade's namespace that
	// the operator impersonates for every read and write of this upgrade's
	// Deployments, so the image is written with that account's rights, not
	// the operator's (Flux's spec.serviceAccountName). Empty: the
	// operator's --default-service-account, or, when that is empty too,
	// the operator's own identity.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// Phase is where an ApplicationUpgrade as a whole has got to.
// +kubebuilder:validation:Enum=Pending;Progressing;Completed;Failed
type Phase string

// The upgrade's phases. Completed and Failed are terminal for a generation of the spec.
const (
	// PhasePending: the references are being validated; nothing written yet.
	PhasePending Phase = "Pending"
	// PhaseProgressing: components are being upgraded wave by wave.
	PhaseProgressing Phase = "Progressing"
	// PhaseCompleted: every component is rolled out.
	PhaseCompleted Phase = "Completed"
	// PhaseFailed: a component failed and every other component is rolled
	// out or blocked by it.
	PhaseFailed Phase = "Failed"
)

// Terminal reports whether no further transition happens for the current generation.
func (p Phase) Terminal() bool { return p == PhaseCompleted || p == PhaseFailed }

// ComponentPhase is where one component has got to.
// +kubebuilder:validation:Enum=Pending;Upgrading;RollingOut;Rolled;Reverted;Failed;Blocked
type ComponentPhase string

// The component phases, in order.
const (
	// ComponentPending: waiting for its dependencies to be fully rolled out.
	ComponentPending ComponentPhase = "Pending"
	// ComponentUpgrading: every dependency is rolled out; its image is written next.
	ComponentUpgrading ComponentPhase = "Upgrading"
	// ComponentRollingOut: its image is written; waiting until every old pod is gone.
	ComponentRollingOut ComponentPhase = "RollingOut"
	// ComponentRolled: fully rolled out (the rollout.Assess verdict Rolled).
	ComponentRolled ComponentPhase = "Rolled"
	// ComponentReverted: after the operator wrote its image, the
	// Deployment's template went back to another image (a GitOps tool, Helm
	// or a person re-applied the old manifest). Reported, never re-written
	// (docs/gitops.md); it returns to RollingOut when the template carries
	// the target image again. Its dependents are not written meanwhile and
	// the upgrade is not Completed (Ready=False, reason ImageReverted).
	ComponentReverted ComponentPhase = "Reverted"
	// ComponentFailed: its rollout or its configuration failed.
	ComponentFailed ComponentPhase = "Failed"
	// ComponentBlocked: a component it depends on (directly or not) failed; never written.
	ComponentBlocked ComponentPhase = "Blocked"
)

// Terminal reports whether the component will not move again in this generation.
func (p ComponentPhase) Terminal() bool {
	return p == ComponentRolled || p == ComponentFailed || p == ComponentBlocked
}

// ComponentStatus is what the operator last decided and observed for one component.
type ComponentStatus struct {
	// Name is the component's name in spec.components.
	Name string `json:"name"`

	// Kind is the kind of the component's workload (Deployment,
	// StatefulSet or DaemonSet).
	// +optional
	Kind WorkloadKind `json:"kind,omitempty"`

	// Wave is the component's depth in the graph: 0 for components without
	// dependencies, otherwise one more than the deepest dependency. Components
	// of one wave roll in parallel.
	// +optional
	Wave int32 `json:"wave"`

	// Phase is the component's phase.
	// +optional
	Phase ComponentPhase `json:"phase,omitempty"`

	// Image is the image of the selected container in the workload's pod template.
	// +optional
	Image string `json:"image,omitempty"`

	// ShortImage is Image without its registry and repository path
	// ("job-worker:v2.0.0"), as kubectl get shows it.
	// +optional
	ShortImage string `json:"shortImage,omitempty"`

	// WrittenGeneration is the Deployment's metadata.generation right after
	// the operator's last image write to it. A read showing an older
	// generation is a cache that has not seen that write yet.
	// +optional
	WrittenGeneration int64 `json:"writtenGeneration,omitempty"`

	// RefusedWrites counts the consecutive image writes the API server
	// refused with a non-retryable error (403, 422, an admission denial,
	// an exceeded quota); at 3 the component is Failed with the API's
	// message. Reset by a successful write or a spec change.
	// +optional
	RefusedWrites int32 `json:"refusedWrites,omitempty"`

	// Message explains the component's phase.
	// +optional
	Message string `json:"message,omitempty"`
}

// Condition types set on an ApplicationUpgrade. They follow kstatus: Ready is
// True only when Completed; Progressing is True while an upgrade runs; Stalled
// is True when Failed.
const (
	ConditionReady       = "Ready"
	ConditionProgressing = "Progressing"
	ConditionStalled     = "Stalled"
	// ConditionReconciling mirrors Progressing under the name kstatus reads
	// (sigs.k8s.io/cli-utils/pkg/kstatus/status: Reconciling True is
	// InProgress); Argo CD and Flux read Progressing.
	ConditionReconciling = "Reconciling"
)

// ApplicationUpgradeStatus reports where the upgrade got to, derived from
// the observed Deployments and pods on every reconcile.
type ApplicationUpgradeStatus struct {
	// Phase is the upgrade's phase.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// PhaseStartTime is when the upgrade or one of its components last
	// changed phase.
	// +optional
	PhaseStartTime *metav1.Time `json:"phaseStartTime,omitempty"`

	// Message is a human-readable explanation of the phase.
	// +optional
	Message string `json:"message,omitempty"`

	// RolledOut counts the rolled-out components, "rolled/total" (e.g. "2/4").
	// +optional
	RolledOut string `json:"rolledOut,omitempty"`

	// Workloads counts the components' workloads by kind, e.g.
	// "2 Deployment, 1 StatefulSet" (the WORKLOADS column).
	// +optional
	Workloads string `json:"workloads,omitempty"`

	// Components is the per-component status, in spec order.
	// +optional
	// +listType=map
	// +listMapKey=name
	Components []ComponentStatus `json:"components,omitempty"`

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

// ApplicationUpgrade upgrades the components of an application in
// dependency order: a component's image is written only once every component
// it depends on is fully rolled out (every old pod gone); independent
// components roll in parallel.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=appupgrade;aup
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Rolled",type=string,JSONPath=`.status.rolledOut`
// +kubebuilder:printcolumn:name="Workloads",type=string,JSONPath=`.status.workloads`
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

// Hub marks v1beta1 as the conversion hub (sigs.k8s.io/controller-runtime/pkg/conversion).
func (*ApplicationUpgrade) Hub() {}

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

// WorkloadKey identifies the workload a component references: its kind,
// namespace and name.
type WorkloadKey struct {
	Kind      WorkloadKind
	Namespace string
	Name      string
}

// NamespacedName is the workload's namespace/name.
func (k WorkloadKey) NamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: k.Namespace, Name: k.Name}
}

// String is the lowercase kind and namespace/name as messages name it:
// "deployment job-system/job-api", "statefulset shop/db".
func (k WorkloadKey) String() string {
	return strings.ToLower(string(k.Kind)) + " " + k.Namespace + "/" + k.Name
}

// IndexKey is the key of the workload in field indexes and claim maps:
// "namespace/name" for a Deployment (the key every release before
// workloadRef used), "Kind:namespace/name" for the other kinds. Names and
// namespaces are DNS labels / subdomains, so neither form is ambiguous.
func (k WorkloadKey) IndexKey() string {
	if k.Kind == KindDeployment || k.Kind == "" {
		return k.Namespace + "/" + k.Name
	}
	return string(k.Kind) + ":" + k.Namespace + "/" + k.Name
}

// ParseIndexKey is the inverse of IndexKey; ok is false for a malformed key.
func ParseIndexKey(key string) (WorkloadKey, bool) {
	k := WorkloadKey{Kind: KindDeployment}
	if kind, rest, found := strings.Cut(key, ":"); found {
		k.Kind, key = WorkloadKind(kind), rest
	}
	ns, name, ok := strings.Cut(key, "/")
	k.Namespace, k.Name = ns, name
	return k, ok && ns != "" && name != ""
}

// Kind is the kind of c's workload: workloadRef's kind when set, else
// Deployment (deploymentRef).
func (c *Component) Kind() WorkloadKind {
	if c.WorkloadRef != nil {
		return c.WorkloadRef.Kind
	}
	return KindDeployment
}

// RefField is the name of the field naming c's workload, for messages:
// "workloadRef" or "deploymentRef".
func (c *Component) RefField() string {
	if c.WorkloadRef != nil {
		return "workloadRef"
	}
	return "deploymentRef"
}

// WorkloadName is the name of c's workload.
func (c *Component) WorkloadName() string {
	if c.WorkloadRef != nil {
		return c.WorkloadRef.Name
	}
	return c.DeploymentRef.Name
}

// WorkloadNamespace is the namespace of c's workload for an upgrade in
// namespace ns: the reference's own, or ns when empty.
func (c *Component) WorkloadNamespace(ns string) string {
	refNS := c.DeploymentRef.Namespace
	if c.WorkloadRef != nil {
		refNS = c.WorkloadRef.Namespace
	}
	if refNS != "" {
		return refNS
	}
	return ns
}

// RefNamespace is the namespace the reference names ("" when it names none).
func (c *Component) RefNamespace() string {
	if c.WorkloadRef != nil {
		return c.WorkloadRef.Namespace
	}
	return c.DeploymentRef.Namespace
}

// Workload is the key of c's workload for an upgrade in namespace ns.
func (c *Component) Workload(ns string) WorkloadKey {
	return WorkloadKey{Kind: c.Kind(), Namespace: c.WorkloadNamespace(ns), Name: c.WorkloadName()}
}

// DeploymentNamespace is WorkloadNamespace, kept under its name from
// before workloadRef: the namespace of c's workload (of any kind).
func (c *Component) DeploymentNamespace(ns string) string { return c.WorkloadNamespace(ns) }

// Workloads is the status.workloads summary of components: how many of
// each kind, in the order kinds first appear ("2 Deployment, 1 StatefulSet").
func Workloads(cs []Component) string {
	var kinds []WorkloadKind
	n := map[WorkloadKind]int{}
	for i := range cs {
		k := cs[i].Kind()
		if n[k] == 0 {
			kinds = append(kinds, k)
		}
		n[k]++
	}
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, strconv.Itoa(n[k])+" "+string(k))
	}
	return strings.Join(parts, ", ")
}

// RolledOut is the status.rolledOut summary of cs, "rolled/total" (e.g. "2/4").
func RolledOut(cs []ComponentStatus) string {
	n := 0
	for _, c := range cs {
		if c.Phase == ComponentRolled {
			n++
		}
	}
	return strconv.Itoa(n) + "/" + strconv.Itoa(len(cs))
}

// Component returns the status entry of component name, or the zero
// ComponentStatus (phase "") when status has none yet.
func (s *ApplicationUpgradeStatus) Component(name string) ComponentStatus {
	for _, c := range s.Components {
		if c.Name == name {
			return c
		}
	}
	return ComponentStatus{}
}
