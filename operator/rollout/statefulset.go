package rollout

import (
	"time"

	"regexp"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Reasons of the StatefulSet and DaemonSet assessments (with the shared
// ones of verdict.go).
const (
	// ReasonPartitioned: a StatefulSet's RollingUpdate partition keeps pods
	// below that ordinal at the old revision; only a person lowering it
	// finishes the rollout.
	ReasonPartitioned = "RolloutPartitioned"
	// ReasonOnDelete: the workload's update strategy is OnDelete; its
	// controller replaces a pod only after someone deletes it, which this
	// operator never does.
	ReasonOnDelete = "OnDeleteStrategy"
	// ReasonRevisionNotCurrent: a StatefulSet's status.currentRevision is
	// not yet its updateRevision.
	ReasonRevisionNotCurrent = "RevisionNotCurrent"
	// ReasonReplicasNotReady: fewer Ready pods than wanted.
	ReasonReplicasNotReady = "ReplicasNotReady"
	// ReasonRevisionUnknown: the current revision of a DaemonSet cannot be
	// identified yet (no ControllerRevision matching its template and no
	// template generation).
	ReasonRevisionUnknown = "RevisionUnknown"
	// ReasonMisscheduled: DaemonSet pods run on nodes that should not run them.
	ReasonMisscheduled = "PodsMisscheduled"
	// ReasonWorkloadBeingDeleted: the StatefulSet or DaemonSet is being deleted.
	ReasonWorkloadBeingDeleted = "WorkloadBeingDeleted"
)

// statefulPodName is getParentNameAndOrdinal's pattern in
// k8s.io/kubernetes pkg/controller/statefulset/stateful_set_utils.go:
// "<parent>-<ordinal>".
var statefulPodName = regexp.MustCompile("(.*)-([0-9]+)$")

// AssessStatefulSet decides whether sts is fully rolled out, from the
// StatefulSet and the pods its selector matches — terminating pods
// included. It mirrors what the StatefulSet controller of Kubernetes
// v1.37.2 publishes (pkg/controller/statefulset/stateful_set_control.go:
// updateStatefulSet sets observedGeneration, currentRevision and
// updateRevision; computeReplicaStatus counts replicas (created pods,
// terminating ones included), readyReplicas, availableReplicas, and
// currentReplicas / updatedReplicas by the pod's controller-revision-hash
// label, terminating pods excluded; completeUpdate in
// stateful_set_utils.go makes currentRevision the updateRevision once
// updated == ready == replicas == spec.replicas) and adds what the counters
// cannot say. In order:
//
//  1. status.observedGeneration >= metadata.generation (and not 0, as
//     `kubectl rollout status` requires: staging/src/k8s.io/kubectl/pkg/
//     polymorphichelpers/rollout_status.go, StatefulSetStatusViewer);
//  2. failure: a pod of the update revision (not terminating) waiting in
//     a pull error or crash loop (the Deployment path's classification);
//  3. the OnDelete strategy with old pods left: waiting, saying which pods
//     to delete (the operator never deletes pods);
//  4. a RollingUpdate partition > 0 with old pods below it: waiting,
//     saying so (kubectl calls such a rollout "partitioned roll out
//     complete"; here it is not fully rolled);
//  5. the counters: updatedReplicas, replicas, readyReplicas and
//     availableReplicas equal spec.replicas, and currentRevision ==
//     updateRevision;
//  6. the pod list: no pod whose controller-revision-hash differs from
//     status.updateRevision and no terminating pod (a StatefulSet pod keeps
//     its name, so the old pod-N must be gone before the new pod-N
//     exists), every ordinal below spec.replicas present, and that many
//     pods available (podsReady: the counters may still count a pod
//     since deleted).
//
// Pods controlled by another object than sts are ignored. Pure; never
// mutates its arguments.
func AssessStatefulSet(sts *appsv1.StatefulSet, pods []corev1.Pod, opts Options) Verdict {
	if sts.DeletionTimestamp != nil {
		return failed(ReasonWorkloadBeingDeleted, "statefulset %s/%s is being deleted", sts.Namespace, sts.Name)
	}
	if sts.Status.ObservedGeneration == 0 || sts.Status.ObservedGeneration < sts.Generation {
		return progressing(ReasonGenerationNotObserved,
			"waiting for the statefulset controller to observe generation %d (observed %d)", sts.Generation, sts.Status.ObservedGeneration)
	}
	update := sts.Status.UpdateRevision
	if update == "" {
		return progressing(ReasonRevisionNotCurrent, "statefulset %s/%s has no update revision in its status yet", sts.Namespace, sts.Name)
	}
	mine := ownedBy(sts.UID, pods)
	isNew := func(p *corev1.Pod) bool { return p.Labels[appsv1.StatefulSetRevisionLabel] == update }
	if v, bad := podFailureWhere(mine, isNew, opts); bad {
		return v
	}
	if v, waiting := statefulSetStrategyHolds(sts, mine, update); waiting {
		return v
	}
	if v, done := statefulSetCounters(sts); !done {
		return v
	}
	return statefulPodsGone(sts, mine, update, opts.Now)
}

// statefulSetStrategyHolds reports a rollout that only a person can
// finish: OnDelete with an old pod left, or a partition keeping old pods.
func statefulSetStrategyHolds(sts *appsv1.StatefulSet, pods []corev1.Pod, update string) (Verdict, bool) {
	old := oldStatefulPods(pods, update)
	if len(old) == 0 {
		return Verdict{}, false
	}
	st := sts.Spec.UpdateStrategy
	if st.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return progressing(ReasonOnDelete,
			"statefulset %s/%s uses the OnDelete update strategy: its controller replaces a pod only after someone deletes it, and this operator never deletes pods; delete the old pods (%s) or switch to RollingUpdate",
			sts.Namespace, sts.Name, names(old, 5)), true
	}
	if st.RollingUpdate == nil || st.RollingUpdate.Partition == nil || *st.RollingUpdate.Partition <= 0 {
		return Verdict{}, false
	}
	partition := int(*st.RollingUpdate.Partition)
	var held []corev1.Pod
	for _, p := range old {
		if ord := ordinal(&p); ord >= 0 && ord < partition {
			held = append(held, p)
		}
	}
	if len(held) == 0 {
		return Verdict{}, false
	}
	return progressing(ReasonPartitioned,
		"statefulset %s/%s has spec.updateStrategy.rollingUpdate.partition %d: pods with an ordinal below it keep the old revision (%s), so the rollout is staged, not complete; lower the partition to 0 to finish it",
		sts.Namespace, sts.Name, partition, names(held, 5)), true
}

// statefulSetCounters checks the status counters against spec.replicas
// and currentRevision == updateRevision (completeUpdate's condition).
func statefulSetCounters(sts *appsv1.StatefulSet) (Verdict, bool) {
	want := int32(1)
	if sts.Spec.Replicas != nil {
		want = *sts.Spec.Replicas
	}
	s := sts.Status
	switch {
	case s.UpdatedReplicas < want:
		return progressing(ReasonReplicasNotUpdated, "%d of %d pods at update revision %s", s.UpdatedReplicas, want, s.UpdateRevision), false
	case s.Replicas != want:
		return progressing(ReasonOldReplicasPending, "%d pods exist, want %d", s.Replicas, want), false
	case s.ReadyReplicas < want:
		return progressing(ReasonReplicasNotReady, "%d of %d pods ready", s.ReadyReplicas, want), false
	case s.AvailableReplicas < want:
		return progressing(ReasonReplicasNotAvailable, "%d of %d pods available", s.AvailableReplicas, want), false
	case s.CurrentRevision != s.UpdateRevision:
		return progressing(ReasonRevisionNotCurrent, "current revision %s is not yet the update revision %s", s.CurrentRevision, s.UpdateRevision), false
	}
	return Verdict{}, true
}

// statefulPodsGone checks the live pod list: no pod of another revision,
// none terminating, one pod for every ordinal the StatefulSet wants, and
// that many available (podsReady).
func statefulPodsGone(sts *appsv1.StatefulSet, pods []corev1.Pod, update string, now time.Time) Verdict {
	want := int32(1)
	if sts.Spec.Replicas != nil {
		want = *sts.Spec.Replicas
	}
	newPods := int32(0)
	for i := range pods {
		p := &pods[i]
		rev := p.Labels[appsv1.StatefulSetRevisionLabel]
		switch {
		case rev != update:
			return progressing(ReasonOldPodsExist, "old pod %s (revision %s) still exists%s", p.Name, rev, terminatingSuffix(p))
		case p.DeletionTimestamp != nil:
			return progressing(ReasonPodsTerminating, "pod %s is terminating", p.Name)
		}
		newPods++
	}
	if newPods < want {
		return progressing(ReasonNewPodsNotCreated, "pod list shows %d of %d pods at update revision %s", newPods, want, update)
	}
	if v, ok := podsReady(pods, want, sts.Spec.MinReadySeconds, now, "pods at update revision "+update); !ok {
		return v
	}
	return Verdict{State: Rolled, Reason: ReasonRolled,
		Message: "all " + itoa(newPods) + " pods run update revision " + update + " and no old pod remains"}
}

// oldStatefulPods are the pods not at revision update (terminating or not).
func oldStatefulPods(pods []corev1.Pod, update string) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range pods {
		if p.Labels[appsv1.StatefulSetRevisionLabel] != update {
			out = append(out, p)
		}
	}
	return out
}

// ordinal is getOrdinal of stateful_set_utils.go: the number after the
// last "-" of the pod's name, or -1.
func ordinal(p *corev1.Pod) int {
	m := statefulPodName.FindStringSubmatch(p.Name)
	if len(m) < 3 {
		return -1
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return -1
	}
	return n
}

// ownedBy drops pods controlled by another object than uid (all pods are
// kept when uid is empty, as in hand-built test objects). Pods without a
// controller are kept: the workload's controller would adopt them.
func ownedBy(uid types.UID, pods []corev1.Pod) []corev1.Pod {
	if uid == "" {
		return pods
	}
	var out []corev1.Pod
	for _, p := range pods {
		if ref := metav1.GetControllerOfNoCopy(&p); ref != nil && ref.UID != "" && ref.UID != uid {
			continue
		}
		out = append(out, p)
	}
	return out
}

// names lists up to n pod names, "a, b, c and 2 more".
func names(pods []corev1.Pod, n int) string {
	s := ""
	for i, p := range pods {
		if i == n {
			return s + " and " + strconv.Itoa(len(pods)-n) + " more"
		}
		if i > 0 {
			s += ", "
		}
		s += p.Name
	}
	return s
}
