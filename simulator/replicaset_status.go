package simulator

import (
	"context"
	"fmt"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func timeDuration(seconds int32) time.Duration { return time.Duration(seconds) * time.Second }

// calculateStatus mirrors replica_set_utils.go calculateStatus: replicas
// counts active pods only; terminating pods go to terminatingReplicas (nil
// with the feature gate off); a failed create/delete sets ReplicaFailure.
func (rsc *replicaSetController) calculateStatus(rs *appsv1.ReplicaSet, active, terminating []*corev1.Pod, manageErr error, now time.Time) appsv1.ReplicaSetStatus {
	st := *rs.Status.DeepCopy()
	// upstream: labels.Set(rs.Spec.Template.Labels).AsSelectorPreValidated()
	// and Matches per pod; the same test (every template label on the pod
	// with its value) without building the selector.
	var labeled, ready, available int32
	for _, p := range active {
		if hasLabels(p.Labels, rs.Spec.Template.Labels) {
			labeled++
		}
		if isPodReady(p) {
			ready++
			if isPodAvailable(p, rs.Spec.MinReadySeconds, now) {
				available++
			}
		}
	}
	st.TerminatingReplicas = nil
	if rsc.terminatingReplicas {
		st.TerminatingReplicas = ptr.To(int32(len(terminating)))
	}
	failure := rsFailureCondition(st)
	switch {
	case manageErr != nil && failure == nil:
		reason := "FailedCreate"
		if len(active) > int(*rs.Spec.Replicas) {
			reason = "FailedDelete"
		}
		st.Conditions = append(st.Conditions, appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure,
			Status: corev1.ConditionTrue, Reason: reason, Message: manageErr.Error(), LastTransitionTime: metav1.NewTime(now)})
	case manageErr == nil && failure != nil:
		st.Conditions = withoutRSCondition(st.Conditions, appsv1.ReplicaSetReplicaFailure)
	}
	st.Replicas, st.FullyLabeledReplicas = int32(len(active)), labeled
	st.ReadyReplicas, st.AvailableReplicas = ready, available
	return st
}

// hasLabels reports whether every label of want is in have with the same
// value: what labels.SelectorFromValidatedSet(want).Matches(have) answers.
func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if w, ok := have[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func rsFailureCondition(st appsv1.ReplicaSetStatus) *appsv1.ReplicaSetCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == appsv1.ReplicaSetReplicaFailure {
			return &st.Conditions[i]
		}
	}
	return nil
}

func withoutRSCondition(cs []appsv1.ReplicaSetCondition, t appsv1.ReplicaSetConditionType) []appsv1.ReplicaSetCondition {
	var out []appsv1.ReplicaSetCondition
	for _, c := range cs {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}

// updateStatus writes the new status unless nothing changed and the
// generation is observed (updateReplicaSetStatus), setting
// observedGeneration; on a conflict it re-reads once and retries.
func (rsc *replicaSetController) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, st appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, error) {
	cur := rs.Status
	if cur.Replicas == st.Replicas && cur.FullyLabeledReplicas == st.FullyLabeledReplicas &&
		cur.ReadyReplicas == st.ReadyReplicas && cur.AvailableReplicas == st.AvailableReplicas &&
		ptr.Equal(cur.TerminatingReplicas, st.TerminatingReplicas) &&
		rs.Generation == cur.ObservedGeneration && reflect.DeepEqual(cur.Conditions, st.Conditions) {
		return rs, nil
	}
	st.ObservedGeneration = rs.Generation
	// rs may be the stored object: written only as a copy, the
	// controller's reused request (rsc.req; Reconcile reads the answer
	// before the next sync, the write keeps nothing of the request).
	req := &rsc.req
	*req = *rs
	rs = req
	for attempt := 0; ; attempt++ {
		rs.Status = st
		// The answer is only read (Reconcile's minReadySeconds check):
		// shared, not copied.
		err := rsc.c.updateStatusSharedAnswer(rs)
		if err == nil || attempt >= 1 || !apierrors.IsConflict(err) {
			if err != nil {
				return nil, fmt.Errorf("update status of replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
			}
			return rs, nil
		}
		if err := rsc.c.Get(ctx, client.ObjectKeyFromObject(rs), rs); err != nil {
			return nil, fmt.Errorf("re-read replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
		}
	}
}
