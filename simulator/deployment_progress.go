package simulator

import (
	"context"
	"reflect"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// syncRolloutStatus writes status during a rollout with progress
// estimation (progress.go): Progressing=True NewReplicaSetAvailable when
// complete, True ReplicaSetUpdated (refreshing lastUpdateTime) on progress,
// False ProgressDeadlineExceeded when lastUpdateTime is older than
// progressDeadlineSeconds. A complete rollout is not re-estimated. When
// nothing changed it schedules the deadline re-check instead.
func (dc *deploymentController) syncRolloutStatus(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	st := dc.calculateStatus(all, newRS, d)
	if !hasProgressDeadline(d) {
		removeDeploymentCondition(&st, appsv1.DeploymentProgressing)
	}
	cur := getDeploymentCondition(d.Status, appsv1.DeploymentProgressing)
	complete := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == ReasonNewRSAvailable
	if hasProgressDeadline(d) && !complete {
		dc.estimateProgress(d, &st, newRS, cur)
	}
	if c := replicaFailure(all, newRS); c != nil {
		setDeploymentCondition(&st, *c)
	} else {
		removeDeploymentCondition(&st, appsv1.DeploymentReplicaFailure)
	}
	// Compared through pointers: the same comparison without boxing a
	// copy of each status.
	if reflect.DeepEqual(&d.Status, &st) {
		dc.requeueStuckDeployment(d, st)
		return nil
	}
	d.Status = st
	return dc.updateStatus(ctx, d)
}

func (dc *deploymentController) estimateProgress(d *appsv1.Deployment, st *appsv1.DeploymentStatus, newRS *appsv1.ReplicaSet, cur *appsv1.DeploymentCondition) {
	// The messages' subject, made only when a condition is set (most
	// passes set none): fmt's %q of a string is strconv.Quote.
	subject := func() string {
		if newRS != nil {
			return "ReplicaSet " + strconv.Quote(newRS.Name)
		}
		return "Deployment " + strconv.Quote(d.Name)
	}
	now := dc.s.now
	switch {
	case deploymentComplete(d, st):
		setDeploymentCondition(st, newDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue,
			ReasonNewRSAvailable, subject()+" has successfully progressed.", now))
	case deploymentProgressing(d, st):
		c := newDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonReplicaSetUpdated, subject()+" is progressing.", now)
		if cur != nil {
			if cur.Status == corev1.ConditionTrue {
				c.LastTransitionTime = cur.LastTransitionTime
			}
			removeDeploymentCondition(st, appsv1.DeploymentProgressing)
		}
		setDeploymentCondition(st, c)
	case deploymentTimedOut(d, st, now):
		setDeploymentCondition(st, newDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse,
			ReasonTimedOut, subject()+" has timed out progressing.", now))
	}
}

// replicaFailure lifts a ReplicaFailure condition of the new (else any)
// ReplicaSet to the Deployment (getReplicaFailures).
func replicaFailure(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) *appsv1.DeploymentCondition {
	for _, rs := range append([]*appsv1.ReplicaSet{newRS}, all...) {
		if rs == nil {
			continue
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				return &appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: c.Status,
					Reason: c.Reason, Message: c.Message, LastTransitionTime: c.LastTransitionTime, LastUpdateTime: c.LastTransitionTime}
			}
		}
	}
	return nil
}

// requeueStuckDeployment schedules a re-check at the progress deadline
// (lastUpdateTime + progressDeadlineSeconds − now, + 1 s), or, when less
// than a second remains, a rate-limited requeue. Past the deadline of a
// rollout that is not re-estimated (the scaling path), this repeats on
// every sync, throttled only by the queue's token bucket — as in the real
// controller, which forgets the key's back-off after each successful sync.
func (dc *deploymentController) requeueStuckDeployment(d *appsv1.Deployment, st appsv1.DeploymentStatus) {
	cur := getDeploymentCondition(d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || cur == nil || deploymentComplete(d, &st) || cur.Reason == ReasonTimedOut {
		return
	}
	after := cur.LastUpdateTime.Add(timeDuration(*d.Spec.ProgressDeadlineSeconds)).Sub(dc.s.now)
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(d)}
	if after < time.Second {
		dc.ctrl.addRateLimited(req) // then forgotten when the sync succeeds
		return
	}
	dc.ctrl.addAfter(req, after+time.Second)
}
