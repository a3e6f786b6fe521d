package simulator

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
)

// syncStatusOnly only updates status (a Deployment being deleted).
func (dc *deploymentController) syncStatusOnly(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	return dc.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// sync is the scaling path, taken when paused or on a scaling event: it
// scales and writes status without estimating progress — which is why a
// bad image scaled up from zero never gets ProgressDeadlineExceeded.
func (dc *deploymentController) sync(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	if err := dc.scale(ctx, d, newRS, oldRSs); err != nil {
		return err
	}
	if d.Spec.Paused {
		if err := dc.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncDeploymentStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// checkPausedConditions sets Progressing=Unknown DeploymentPaused /
// DeploymentResumed on pause and resume, so a resumed Deployment does not
// time out for the paused time; a timed-out condition is kept.
func (dc *deploymentController) checkPausedConditions(ctx context.Context, d *appsv1.Deployment) error {
	if !hasProgressDeadline(d) {
		return nil
	}
	cond := getDeploymentCondition(d.Status, appsv1.DeploymentProgressing)
	if cond != nil && cond.Reason == ReasonTimedOut {
		return nil
	}
	paused := cond != nil && cond.Reason == ReasonPaused
	var c appsv1.DeploymentCondition
	switch {
	case d.Spec.Paused && !paused:
		c = newDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonPaused, "Deployment is paused", dc.s.now)
	case !d.Spec.Paused && paused:
		c = newDeploymentCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonResumed, "Deployment is resumed", dc.s.now)
	default:
		return nil
	}
	setDeploymentCondition(&d.Status, c)
	return dc.updateStatus(ctx, d)
}

// getAllReplicaSetsAndSyncRevision returns the new ReplicaSet (created if
// asked and missing) and all old ones.
func (dc *deploymentController) getAllReplicaSetsAndSyncRevision(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, create bool) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	oldRSs := findOldReplicaSets(d, rsList, &dc.templates)
	newRS, err := dc.getNewReplicaSet(ctx, d, rsList, oldRSs, create)
	if err != nil {
		return nil, nil, err
	}
	return newRS, oldRSs, nil
}

// isScalingEvent: an active ReplicaSet's desired-replicas annotation
// differs from spec.replicas.
func (dc *deploymentController) isScalingEvent(d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) bool {
	for _, rs := range filterActive(rsList) {
		desired, err := strconv.ParseUint(rs.Annotations[DesiredReplicasAnnotation], 10, 32)
		if err == nil && int32(desired) != *d.Spec.Replicas {
			return true
		}
	}
	return false
}

// scaleReplicaSet sets a ReplicaSet's size (and replicas annotations) with
// an update, reporting whether the size changed. Without force it acts
// only when the size differs.
func (dc *deploymentController) scaleReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, size int32, d *appsv1.Deployment, force bool) (bool, *appsv1.ReplicaSet, error) {
	if !force && *rs.Spec.Replicas == size {
		return false, rs, nil
	}
	sizeChanged := *rs.Spec.Replicas != size
	maxReplicas := *d.Spec.Replicas + maxSurge(d)
	if !sizeChanged && !replicasAnnotationsNeedUpdate(rs, *d.Spec.Replicas, maxReplicas) {
		return false, rs, nil
	}
	// The request (rs.DeepCopy() upstream) is a shallow copy of the shared
	// ReplicaSet with its own replicas and annotations, the two parts
	// changed: the store reads the rest, and the answer replaces every
	// field of cp with a deep copy of the stored object (assign).
	cp := new(appsv1.ReplicaSet)
	*cp = *rs
	cp.Spec.Replicas = ptr.To(size)
	cp.Annotations = maps.Clone(rs.Annotations)
	setReplicasAnnotations(cp, *d.Spec.Replicas, maxReplicas)
	if err := dc.c.Update(ctx, cp); err != nil {
		return false, rs, fmt.Errorf("scale replicaset %s/%s to %d: %w", rs.Namespace, rs.Name, size, err)
	}
	return sizeChanged, cp, nil
}

// cleanupDeployment deletes the oldest empty ReplicaSets beyond
// revisionHistoryLimit.
func (dc *deploymentController) cleanupDeployment(ctx context.Context, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) error {
	if d.Spec.RevisionHistoryLimit == nil {
		return nil
	}
	var cleanable []*appsv1.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.DeletionTimestamp == nil {
			cleanable = append(cleanable, rs)
		}
	}
	diff := len(cleanable) - int(*d.Spec.RevisionHistoryLimit)
	if diff <= 0 {
		return nil
	}
	sortByRevision(cleanable)
	for _, rs := range cleanable[:diff] {
		if rs.Status.Replicas != 0 || *rs.Spec.Replicas != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		if err := dc.c.Delete(ctx, rs); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete old replicaset %s/%s: %w", rs.Namespace, rs.Name, err)
		}
	}
	return nil
}

// syncDeploymentStatus writes the calculated status if it changed.
func (dc *deploymentController) syncDeploymentStatus(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) error {
	st := dc.calculateStatus(all, newRS, d)
	if reflect.DeepEqual(d.Status, st) {
		return nil
	}
	d.Status = st
	return dc.updateStatus(ctx, d)
}

// calculateStatus mirrors sync.go calculateStatus: counts summed over the
// ReplicaSets' status (terminating pods only in terminatingReplicas),
// unavailable = max(0, sum of ReplicaSet spec replicas − available),
// observedGeneration = generation, and the Available condition.
func (dc *deploymentController) calculateStatus(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) appsv1.DeploymentStatus {
	available := sumStatus(all, func(s appsv1.ReplicaSetStatus) int32 { return s.AvailableReplicas })
	st := appsv1.DeploymentStatus{
		ObservedGeneration:  d.Generation,
		Replicas:            sumStatus(all, func(s appsv1.ReplicaSetStatus) int32 { return s.Replicas }),
		UpdatedReplicas:     sumStatus([]*appsv1.ReplicaSet{newRS}, func(s appsv1.ReplicaSetStatus) int32 { return s.Replicas }),
		ReadyReplicas:       sumStatus(all, func(s appsv1.ReplicaSetStatus) int32 { return s.ReadyReplicas }),
		AvailableReplicas:   available,
		UnavailableReplicas: max(0, sumSpecReplicas(all)-available),
		CollisionCount:      d.Status.CollisionCount,
	}
	if dc.terminatingReplicas {
		st.TerminatingReplicas = sumTerminating(all)
	}
	st.Conditions = append(st.Conditions, d.Status.Conditions...)
	if available >= *d.Spec.Replicas-maxUnavailable(d) {
		setDeploymentCondition(&st, newDeploymentCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue,
			ReasonMinimumAvailable, "Deployment has minimum availability.", dc.s.now))
	} else {
		setDeploymentCondition(&st, newDeploymentCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse,
			ReasonMinimumUnavailable, "Deployment does not have minimum availability.", dc.s.now))
	}
	return st
}
