package controller

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// Watch is one of the reconciler's watches: the watched kind, the map from
// an event's object to the upgrades to reconcile (nil: the object itself,
// the reconciled kind) and the predicate that drops the events that cannot
// change any upgrade's verdict (nil: every event). The manager
// (SetupWithManagerAs) and the simulator (scenarios/sim/simrun) register the
// same list, so both wake the reconciler on the same events.
type Watch struct {
	Object    client.Object
	Map       handler.MapFunc
	Predicate predicate.Predicate
}

// Watches returns the reconciler's watches; the first is the reconciled
// kind itself (the builder's For).
//
// The predicates drop updates that change nothing the reconciler reads
// (create, delete and generic events always pass):
//   - an ApplicationUpgrade's own update passes when UpgradeChanged says
//     so: the reconciler's own status writes that change only messages,
//     conditions or times do not wake it again, nor does a metadata-only
//     edit (labels, annotations, owner references); the second watch, which
//     wakes the other upgrades of the same workloads when one finishes,
//     passes every update but a metadata-only one (UpgradeStateChanged).
//     No reconcile reads an upgrade's labels or annotations, and a
//     reconcile costs one API request per component when the upgrade
//     impersonates a ServiceAccount (uncached reads): passing metadata
//     edits let anyone who may update ApplicationUpgrades, without any
//     right on the workloads, make the operator send ~33 requests per
//     annotation written on a 32-component upgrade (tenant trial,
//     2026-12-03);
//   - a ReplicaSet's update passes when its generation (spec), labels,
//     annotations, owner references, deletion or status.conditions changed
//     — the counters of a ReplicaSet are never read, the Deployment's are;
//   - a pod's update passes when PodChanged says so.
//
// Deployments, StatefulSets, DaemonSets and ControllerRevisions are not
// filtered: nearly all their updates change status the assessment reads.
func (m Mapper) Watches() []Watch {
	return []Watch{
		{Object: &v1beta1.ApplicationUpgrade{}, Predicate: updates(UpgradeChanged)},
		{Object: &v1beta1.ApplicationUpgrade{}, Map: m.Upgrade, Predicate: updates(UpgradeStateChanged)},
		{Object: &appsv1.Deployment{}, Map: m.Deployment},
		{Object: &appsv1.ReplicaSet{}, Map: m.ReplicaSet, Predicate: updates(ReplicaSetChanged)},
		{Object: &appsv1.StatefulSet{}, Map: m.StatefulSet},
		{Object: &appsv1.DaemonSet{}, Map: m.DaemonSet},
		{Object: &appsv1.ControllerRevision{}, Map: m.ControllerRevision},
		{Object: &corev1.Pod{}, Map: m.Pod, Predicate: updates(PodChanged)},
	}
}

// updates is a predicate that passes every create, delete and generic
// event, and an update when changed(old, new) holds for two objects of
// type T (an update of another type passes).
func updates[T client.Object](changed func(old, new T) bool) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(T)
		n, ok2 := e.ObjectNew.(T)
		return !ok1 || !ok2 || changed(o, n)
	}}
}

// UpgradeChanged reports whether an update of an ApplicationUpgrade from o
// to n changes an input of appupgrade.Decide: the generation (spec;
// deletion bumps it too), deletion, or the decision state kept in status —
// the phase, observedGeneration and each component's name, phase,
// writtenGeneration and refusedWrites. A status write that changes only
// messages, conditions, images shown or times would produce the same plan
// from the same observations, so it is not reconciled again; the
// observations themselves change through the workload watches. Labels,
// annotations and owner references are read by no reconcile (the
// conversion annotation never reaches the stored v1beta1 object through
// v1alpha1, and the controller ignores it on v1beta1), so a metadata-only
// edit does not wake it either.
func UpgradeChanged(o, n *v1beta1.ApplicationUpgrade) bool {
	if o.Generation != n.Generation || deletionChanged(&o.ObjectMeta, &n.ObjectMeta) ||
		o.Status.Phase != n.Status.Phase || o.Status.ObservedGeneration != n.Status.ObservedGeneration {
		return true
	}
	return !slices.EqualFunc(o.Status.Components, n.Status.Components, func(a, b v1beta1.ComponentStatus) bool {
		return a.Name == b.Name && a.Phase == b.Phase && a.WrittenGeneration == b.WrittenGeneration && a.RefusedWrites == b.RefusedWrites
	})
}

// UpgradeStateChanged reports whether an update of an ApplicationUpgrade
// from o to n changes more than its metadata: its generation (spec),
// deletion or status. The watch that wakes the other upgrades of the same
// workloads (Mapper.Upgrade) passes these: a held upgrade is released by
// the holder's status or spec, never by its labels or annotations.
func UpgradeStateChanged(o, n *v1beta1.ApplicationUpgrade) bool {
	return o.Generation != n.Generation || deletionChanged(&o.ObjectMeta, &n.ObjectMeta) ||
		!equality.Semantic.DeepEqual(o.Status, n.Status)
}

// deletionChanged reports whether o and n differ in being deleted.
func deletionChanged(o, n *metav1.ObjectMeta) bool {
	return (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
}

// ReplicaSetChanged reports whether an update of a ReplicaSet from o to n
// changes what rollout.Assess reads of it (identity, template, ownership,
// conditions), rather than only its replica counters.
func ReplicaSetChanged(o, n *appsv1.ReplicaSet) bool {
	return o.Generation != n.Generation || metaChanged(&o.ObjectMeta, &n.ObjectMeta) ||
		!equality.Semantic.DeepEqual(o.Status.Conditions, n.Status.Conditions)
}

// PodChanged reports whether an update of a pod from o to n changes what
// the reconciler reads of a pod (StripPod keeps more): its labels (template
// hash, revision), annotations, owner references, deletion, node (a
// DaemonSet's pod per node), its Ready condition's status and transition
// time (the pod-list rule, rollout.Assess), and for every init and regular
// container its name, restart count and waiting reason and message (the
// failure classification, rollout/failure.go). Scheduling and other
// conditions, phase, addresses, container states other than waiting and
// start times are dropped.
func PodChanged(o, n *corev1.Pod) bool {
	return metaChanged(&o.ObjectMeta, &n.ObjectMeta) || o.Spec.NodeName != n.Spec.NodeName ||
		readyCondition(o) != readyCondition(n) ||
		containersChanged(o.Status.InitContainerStatuses, n.Status.InitContainerStatuses) ||
		containersChanged(o.Status.ContainerStatuses, n.Status.ContainerStatuses)
}

// readyCondition is the pod's Ready condition's status and transition
// time ("" and zero when it has none).
func readyCondition(p *corev1.Pod) [2]string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return [2]string{string(c.Status), c.LastTransitionTime.UTC().String()}
		}
	}
	return [2]string{}
}

func containersChanged(o, n []corev1.ContainerStatus) bool {
	return !slices.EqualFunc(o, n, func(a, b corev1.ContainerStatus) bool {
		return a.Name == b.Name && a.RestartCount == b.RestartCount && waiting(a) == waiting(b)
	})
}

func waiting(cs corev1.ContainerStatus) corev1.ContainerStateWaiting {
	if cs.State.Waiting == nil {
		return corev1.ContainerStateWaiting{Reason: "\x00not waiting"}
	}
	return *cs.State.Waiting
}

// metaChanged reports a change of the metadata any watch maps or reads:
// labels, annotations, owner references and deletion.
func metaChanged(o, n *metav1.ObjectMeta) bool {
	return !maps.Equal(o.Labels, n.Labels) || !maps.Equal(o.Annotations, n.Annotations) ||
		!equality.Semantic.DeepEqual(o.OwnerReferences, n.OwnerReferences) ||
		(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
}
