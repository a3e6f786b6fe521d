package simulator

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
)

// rolloutRolling is one RollingUpdate sync (rolling.go): scale the new
// ReplicaSet up if allowed, else scale old ones down if allowed — never
// both in one sync — then write status with progress estimation.
func (dc *deploymentController) rolloutRolling(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) error {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true)
	if err != nil {
		return err
	}
	all := append(oldRSs, newRS)
	scaledUp, err := dc.reconcileNewReplicaSet(ctx, all, newRS, d)
	if err != nil {
		return err
	}
	if scaledUp {
		return dc.syncRolloutStatus(ctx, all, newRS, d)
	}
	scaledDown, err := dc.reconcileOldReplicaSets(ctx, all, filterActive(oldRSs), newRS, d)
	if err != nil {
		return err
	}
	if scaledDown {
		return dc.syncRolloutStatus(ctx, all, newRS, d)
	}
	if deploymentComplete(d, &d.Status) {
		if err := dc.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncRolloutStatus(ctx, all, newRS, d)
}

// reconcileNewReplicaSet grows the new ReplicaSet within maxSurge (or
// shrinks it to spec.replicas).
func (dc *deploymentController) reconcileNewReplicaSet(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	if *newRS.Spec.Replicas == *d.Spec.Replicas {
		return false, nil
	}
	size := *d.Spec.Replicas
	if *newRS.Spec.Replicas < size {
		size = newRSNewReplicas(d, all, newRS)
	}
	scaled, _, err := dc.scaleReplicaSet(ctx, newRS, size, d, false)
	return scaled, err
}

// reconcileOldReplicaSets shrinks old ReplicaSets by at most
// allPods − (spec − maxUnavailable) − newRSUnavailable (all in spec counts),
// unhealthy replicas first, then within maxUnavailable.
func (dc *deploymentController) reconcileOldReplicaSets(ctx context.Context, all, oldRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, d *appsv1.Deployment) (bool, error) {
	if sumSpecReplicas(oldRSs) == 0 {
		return false, nil
	}
	minAvailable := *d.Spec.Replicas - maxUnavailable(d)
	newRSUnavailable := *newRS.Spec.Replicas - newRS.Status.AvailableReplicas
	maxScaledDown := sumSpecReplicas(all) - minAvailable - newRSUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	oldRSs, cleaned, err := dc.cleanupUnhealthyReplicas(ctx, oldRSs, d, maxScaledDown)
	if err != nil {
		return false, nil // as the real one: the error is dropped, the next sync retries
	}
	scaled, err := dc.scaleDownOldReplicaSetsForRollingUpdate(ctx, append(oldRSs, newRS), oldRSs, d)
	if err != nil {
		return false, nil
	}
	return cleaned+scaled > 0, nil
}

// cleanupUnhealthyReplicas removes old replicas that are not available,
// oldest ReplicaSet first, up to maxCleanup.
func (dc *deploymentController) cleanupUnhealthyReplicas(ctx context.Context, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment, maxCleanup int32) ([]*appsv1.ReplicaSet, int32, error) {
	rsByCreation(oldRSs)
	var total int32
	for i, rs := range oldRSs {
		if total >= maxCleanup {
			break
		}
		if *rs.Spec.Replicas == 0 || *rs.Spec.Replicas == rs.Status.AvailableReplicas {
			continue
		}
		down := min(maxCleanup-total, *rs.Spec.Replicas-rs.Status.AvailableReplicas)
		_, updated, err := dc.scaleReplicaSet(ctx, rs, *rs.Spec.Replicas-down, d, false)
		if err != nil {
			return nil, total, err
		}
		total += down
		oldRSs[i] = updated
	}
	return oldRSs, total, nil
}

// scaleDownOldReplicaSetsForRollingUpdate removes old replicas while
// available pods exceed spec − maxUnavailable, oldest ReplicaSet first.
func (dc *deploymentController) scaleDownOldReplicaSetsForRollingUpdate(ctx context.Context, all, oldRSs []*appsv1.ReplicaSet, d *appsv1.Deployment) (int32, error) {
	minAvailable := *d.Spec.Replicas - maxUnavailable(d)
	available := sumStatus(all, func(s appsv1.ReplicaSetStatus) int32 { return s.AvailableReplicas })
	if available <= minAvailable {
		return 0, nil
	}
	rsByCreation(oldRSs)
	var total int32
	want := available - minAvailable
	for _, rs := range oldRSs {
		if total >= want {
			break
		}
		if *rs.Spec.Replicas == 0 {
			continue
		}
		down := min(*rs.Spec.Replicas, want-total)
		if _, _, err := dc.scaleReplicaSet(ctx, rs, *rs.Spec.Replicas-down, d, false); err != nil {
			return total, err
		}
		total += down
	}
	return total, nil
}
