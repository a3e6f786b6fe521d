// Package eventlog records the ordering-relevant history of an upgrade as
// JSON Lines, the one format every backend writes and every check, report
// and picture reads (version 2, docs/eventlog.md). A file starts with the
// header line {"eventlog":2}; then one event a line:
//
//	{"t":12.5,"event":"PodDeleted","namespace":"job-system","name":"job-worker-6d9f-abcde",
//	 "deployment":"job-worker","image":"registry.example.com/job-worker:v1.0.0","phase":"","rv":"1234",
//	 "containers":[{"name":"worker","image":"registry.example.com/job-worker:v1.0.0"}],
//	 "hash":"6d9f","replicaSet":"job-worker-6d9f"}
//
// A pod is *old* when its pod-template-hash is none of the hashes its
// Deployment's template took from the first rewrite after its creation on
// (Replay, State.Old) — never by comparing one container's image.
//
// A dependency graph (v1beta1) adds one line per component phase change:
//
//	{"t":14.0,"event":"ComponentPhase","namespace":"job-system","name":"upgrade-v2",
//	 "deployment":"cache","image":"","phase":"cache=RollingOut","rv":"1300"}
//
// t is seconds since the recording started (virtual seconds in the
// simulator); rv is the object's resourceVersion where there is one. On a
// real cluster events come from several watches and may arrive out of order;
// with one etcd, resourceVersions are one global order, so checks order by
// rv where both events carry one.
package eventlog

// Event kinds.
const (
	DeploymentWrite = "DeploymentWrite" // a workload's pod template image changed (or the workload was created); Kind says a StatefulSet or DaemonSet
	PodCreated      = "PodCreated"
	PodReady        = "PodReady"
	PodDeleting     = "PodDeleting" // deletionTimestamp set: the pod is terminating but may still serve
	PodDeleted      = "PodDeleted"  // the pod object is gone
	Phase           = "Phase"       // an ApplicationUpgrade's status.phase changed
	// ComponentPhase: one component of an ApplicationUpgrade changed phase.
	// Name is the upgrade, Deployment the component's Deployment, and Phase
	// "<component>=<phase>", e.g. "worker=RollingOut" (v1beta1 component
	// phases: Pending, Upgrading, RollingOut, Rolled, Failed, Blocked).
	ComponentPhase = "ComponentPhase"
	// UpgradeDeleted: an ApplicationUpgrade that had a phase is gone. An
	// upgrade created again under the same name starts its generations
	// (and its phases) afresh, so the phase checks start over after it.
	UpgradeDeleted = "UpgradeDeleted"
	// Revision: a StatefulSet's or DaemonSet's current pod template is
	// labelled HashAfter on its pods (controller-revision-hash): the
	// recorder matched the template with one of the workload's
	// ControllerRevisions. Name and Deployment are the workload, Kind its
	// kind, RV the ControllerRevision's (or the workload's, when the write
	// found the revision already there and says HashAfter itself).
	Revision = "Revision"
	// DeploymentStatus is recorded only by a detailed Recorder: a
	// Deployment's generation, observedGeneration, spec.replicas or status
	// counters changed.
	DeploymentStatus = "DeploymentStatus"
	// WorkloadStatus is recorded only by a detailed Recorder: a
	// StatefulSet's or DaemonSet's (Kind) generation, observedGeneration
	// or status counters changed (Workload). The fidelity report reads it;
	// the ordering checks judge these kinds by their pods.
	WorkloadStatus = "WorkloadStatus"
)

// Version is the event log format this package writes and reads.
const Version = 2

// Container is one container of a pod or of a Deployment's pod template.
type Container struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// Event is one line of the log.
type Event struct {
	// T is seconds since the start of the recording (virtual in the simulator).
	T float64 `json:"t"`
	// Event is one of the kinds above.
	Event string `json:"event"`
	// Namespace and Name identify the object (Deployment, pod or ApplicationUpgrade).
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Deployment is the owning workload of a pod, or the workload itself:
	// a Deployment, or the StatefulSet or DaemonSet Kind names.
	Deployment string `json:"deployment"`
	// Kind is the workload's kind on workload writes, Revision and pod
	// events: "StatefulSet" or "DaemonSet"; "" for a Deployment (and
	// for a pod of no workload, Deployment "").
	Kind string `json:"kind,omitempty"`
	// Image is the image written into Container (DeploymentWrite; "" when
	// the write changed no image or created a Deployment of several
	// containers); for a pod, its first container's image, for display
	// only: which pods are old is decided by Hash (State.Old).
	Image string `json:"image"`
	// Phase is the new phase (Phase events): the v1alpha1 phase
	// (Pending … WaitingForAPI, Completed, Failed) when the upgrade can be
	// said in v1alpha1 (two components, one depending on the other), else
	// the v1beta1 phase (Pending, Progressing, Completed, Failed); for
	// ComponentPhase events "<component>=<phase>".
	Phase string `json:"phase"`
	// RV is the object's resourceVersion at the event, where there is one.
	RV string `json:"rv,omitempty"`
	// Exited (PodDeleted only, where a kubelet reported it) is when the
	// pod's last container exited, in seconds since the start of the
	// recording: the container runtime's exit time from the pod's last
	// status (containerStatuses[].state.terminated.finishedAt, whole
	// seconds, so up to 1 s early). kwok and the simulator report none.
	Exited *float64 `json:"exited,omitempty"`

	// Containers are every container by name: a pod's (Pod* events) or the
	// Deployment's pod template's (DeploymentWrite).
	Containers []Container `json:"containers,omitempty"`
	// Hash is a pod's pod-template-hash label (Pod* events), or its
	// controller-revision-hash label for a StatefulSet's or DaemonSet's pod.
	Hash string `json:"hash,omitempty"`
	// ReplicaSet is the name of a pod's controlling ReplicaSet (Pod* events).
	ReplicaSet string `json:"replicaSet,omitempty"`
	// Container is the container whose image a DeploymentWrite changed;
	// "" when it created the Deployment with several containers or changed
	// the template without changing an image.
	Container string `json:"container,omitempty"`
	// HashBefore and HashAfter are the Deployment's pod-template-hash
	// before and after a DeploymentWrite (HashBefore "" when it created the
	// Deployment): what the Deployment controller labels the pods of the
	// template with (controller.ComputeHash over the template and
	// status.collisionCount). For a StatefulSet or DaemonSet, the value
	// its pods' controller-revision-hash label takes, "" when the write
	// came before the ControllerRevision of its template (a Revision event
	// then says it).
	HashBefore string `json:"hashBefore,omitempty"`
	HashAfter  string `json:"hashAfter,omitempty"`
	// ImageOwner names the field managers that own Container's image
	// after a DeploymentWrite (metadata.managedFields,
	// appupgrade.ImageOwner: sorted, comma-separated), so a reader can
	// tell the operator's write (upgrade-operator, which applies with
	// force and so owns the image alone after changing it) from another
	// writer's (kustomize-controller, kubectl): "" when no manager owns it
	// (logs recorded before 2026-12-03, or a write without Container).
	ImageOwner string `json:"imageOwner,omitempty"`

	// Generation is an ApplicationUpgrade's status.observedGeneration (Phase
	// and ComponentPhase events); 0 before the operator observed the
	// upgrade, and in logs recorded before 2026-12-02 without detail.
	Generation int64 `json:"generation,omitempty"`

	// The fields below are filled by a detailed Recorder only (NewDetailedRecorder).

	// Images are every container's image: of a pod, or of a Deployment's
	// pod template (DeploymentWrite, DeploymentStatus).
	Images []string `json:"images,omitempty"`
	// Message is an ApplicationUpgrade's status.message (Phase events) or
	// the component's message (ComponentPhase events).
	Message string `json:"message,omitempty"`
	// Status is a Deployment's generation and counters (DeploymentStatus events).
	Status *Counters `json:"status,omitempty"`
	// Workload is a StatefulSet's or DaemonSet's generation and counters
	// (WorkloadStatus events).
	Workload *WorkloadCounters `json:"workload,omitempty"`
	// Node is the node a pod runs on or is bound for (Pod* events):
	// spec.nodeName, else the node a DaemonSet pod's node affinity names
	// (TargetNode); "" when neither says one.
	Node string `json:"node,omitempty"`
}

// WorkloadCounters are a StatefulSet's or DaemonSet's generation and
// status as its controller writes them (k8s.io/api apps/v1
// StatefulSetStatus, DaemonSetStatus). Spec is spec.replicas of a
// StatefulSet, status.desiredNumberScheduled of a DaemonSet.
type WorkloadCounters struct {
	Generation         int64 `json:"generation"`
	ObservedGeneration int64 `json:"observedGeneration"`
	Spec               int32 `json:"spec"`
	// StatefulSet: replicas, readyReplicas, availableReplicas,
	// currentReplicas, updatedReplicas, currentRevision, updateRevision
	// (ControllerRevision names).
	Replicas        int32  `json:"replicas,omitempty"`
	Ready           int32  `json:"ready,omitempty"`
	Available       int32  `json:"available,omitempty"`
	Current         int32  `json:"current,omitempty"`
	Updated         int32  `json:"updated,omitempty"`
	CurrentRevision string `json:"currentRevision,omitempty"`
	UpdateRevision  string `json:"updateRevision,omitempty"`
	// DaemonSet: currentNumberScheduled (Current), updatedNumberScheduled
	// (Updated), numberReady (Ready), numberAvailable (Available),
	// numberUnavailable, numberMisscheduled.
	Unavailable  int32 `json:"unavailable,omitempty"`
	Misscheduled int32 `json:"misscheduled,omitempty"`
}

// Counters are the ordering-relevant parts of a Deployment: whether the
// Deployment controller has observed its spec, and its replica counters.
// Terminating is nil where the cluster does not report
// status.terminatingReplicas.
type Counters struct {
	Generation         int64  `json:"generation"`
	ObservedGeneration int64  `json:"observedGeneration"`
	Spec               int32  `json:"spec"`
	Replicas           int32  `json:"replicas"`
	Updated            int32  `json:"updated"`
	Ready              int32  `json:"ready"`
	Available          int32  `json:"available"`
	Terminating        *int32 `json:"terminating,omitempty"`
	// DeadlineExceeded is the message of a Progressing=False /
	// ProgressDeadlineExceeded condition (`ReplicaSet "<name>" has timed
	// out progressing.`), empty when there is none: which ReplicaSet the
	// deadline is about, so a history shows the window where the status
	// carries the new observedGeneration and an older rollout's deadline.
	DeadlineExceeded string `json:"deadlineExceeded,omitempty"`
}
