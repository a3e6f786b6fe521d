package mutants

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// The StatefulSet and DaemonSet halves of the counters-only and
// ignore-terminating mutants: each mutant weakens the assessment of every
// workload kind the same way, so a graph with a StatefulSet or DaemonSet
// callee is judged by the weakened rule too.

// countersOnlyKinds sets the counters-only rule for StatefulSets and
// DaemonSets: `kubectl rollout status`, as the Deployment half is.
func countersOnlyKinds(r *controller.ApplicationUpgradeReconciler) {
	r.AssessStatefulSetFunc = statefulSetCounters
	r.AssessDaemonSetFunc = daemonSetCounters
}

// statefulSetCounters is kubectl's StatefulSetStatusViewer.Status
// (staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go,
// v1.37.2): generation observed; readyReplicas >= spec.replicas (a
// terminating pod that is still Ready counts: computeReplicaStatus counts
// isRunningAndReady pods); with a RollingUpdate partition,
// updatedReplicas >= replicas - partition is "partitioned roll out
// complete"; else currentRevision == updateRevision. No pod list.
func statefulSetCounters(sts *appsv1.StatefulSet, _ []corev1.Pod, _ rollout.Options) rollout.Verdict {
	wait := func(format string, args ...any) rollout.Verdict {
		return rollout.Verdict{State: rollout.Progressing, Reason: "CountersNotDone", Message: fmt.Sprintf(format, args...) + " (mutant)"}
	}
	done := rollout.Verdict{State: rollout.Rolled, Reason: rollout.ReasonRolled, Message: "counters complete (mutant)"}
	s := sts.Status
	if s.ObservedGeneration == 0 || sts.Generation > s.ObservedGeneration {
		return wait("waiting for statefulset spec update to be observed")
	}
	if sts.Spec.Replicas != nil && s.ReadyReplicas < *sts.Spec.Replicas {
		return wait("waiting for %d pods to be ready", *sts.Spec.Replicas-s.ReadyReplicas)
	}
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil && sts.Spec.Replicas != nil && ru.Partition != nil {
		if s.UpdatedReplicas < *sts.Spec.Replicas-*ru.Partition {
			return wait("waiting for partitioned roll out to finish: %d out of %d new pods have been updated", s.UpdatedReplicas, *sts.Spec.Replicas-*ru.Partition)
		}
		return done
	}
	if s.UpdateRevision != s.CurrentRevision {
		return wait("waiting for statefulset rolling update to complete %d pods at revision %s", s.UpdatedReplicas, s.UpdateRevision)
	}
	return done
}

// daemonSetCounters is kubectl's DaemonSetStatusViewer.Status (same
// file): generation observed; updatedNumberScheduled and numberAvailable
// reach desiredNumberScheduled. No pod list, no revisions.
func daemonSetCounters(ds *appsv1.DaemonSet, _ []appsv1.ControllerRevision, _ []corev1.Pod, _ rollout.Options) rollout.Verdict {
	s := ds.Status
	switch {
	case ds.Generation > s.ObservedGeneration:
		return rollout.Verdict{State: rollout.Progressing, Reason: "CountersNotDone", Message: "waiting for daemon set spec update to be observed (mutant)"}
	case s.UpdatedNumberScheduled < s.DesiredNumberScheduled:
		return rollout.Verdict{State: rollout.Progressing, Reason: "CountersNotDone",
			Message: fmt.Sprintf("%d out of %d new pods have been updated (mutant)", s.UpdatedNumberScheduled, s.DesiredNumberScheduled)}
	case s.NumberAvailable < s.DesiredNumberScheduled:
		return rollout.Verdict{State: rollout.Progressing, Reason: "CountersNotDone",
			Message: fmt.Sprintf("%d of %d updated pods are available (mutant)", s.NumberAvailable, s.DesiredNumberScheduled)}
	}
	return rollout.Verdict{State: rollout.Rolled, Reason: rollout.ReasonRolled, Message: "counters complete (mutant)"}
}

// ignoreTerminatingKinds drops terminating pods from the StatefulSet's
// and DaemonSet's pod lists, as the Deployment half does.
func ignoreTerminatingKinds(r *controller.ApplicationUpgradeReconciler) {
	r.AssessStatefulSetFunc = func(sts *appsv1.StatefulSet, pods []corev1.Pod, o rollout.Options) rollout.Verdict {
		return rollout.AssessStatefulSet(sts, activePods(pods), o)
	}
	r.AssessDaemonSetFunc = func(ds *appsv1.DaemonSet, revs []appsv1.ControllerRevision, pods []corev1.Pod, o rollout.Options) rollout.Verdict {
		return rollout.AssessDaemonSet(ds, revs, activePods(pods), o)
	}
}

func activePods(pods []corev1.Pod) []corev1.Pod {
	var active []corev1.Pod
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			active = append(active, p)
		}
	}
	return active
}

// both applies every customisation in order.
func both(fs ...func(*controller.ApplicationUpgradeReconciler)) func(*controller.ApplicationUpgradeReconciler) {
	return func(r *controller.ApplicationUpgradeReconciler) {
		for _, f := range fs {
			f(r)
		}
	}
}
