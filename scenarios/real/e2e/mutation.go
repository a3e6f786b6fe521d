package e2e

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// CountersOnly is the mutation of the readiness rule: the ordered-upgrade
// seed's and `kubectl rollout status`'s test — generation observed and
// updated == replicas == available == spec.replicas — without the pod list
// and without status.terminatingReplicas. A suite that passes with it in
// place of rollout.Assess cannot tell a safe operator from an unsafe one.
func CountersOnly(d *appsv1.Deployment, _ []appsv1.ReplicaSet, _ []corev1.Pod, _ rollout.Options) rollout.Verdict {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	if s.ObservedGeneration < d.Generation || s.UpdatedReplicas != want || s.Replicas != want || s.AvailableReplicas != want {
		return rollout.Verdict{State: rollout.Progressing, Reason: "CountersIncomplete", Message: "counters not complete"}
	}
	return rollout.Verdict{State: rollout.Rolled, Reason: rollout.ReasonRolled, Message: "counters complete"}
}
