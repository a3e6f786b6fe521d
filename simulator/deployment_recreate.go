package simulator

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// rolloutRecreate is one Recreate sync (recreate.go): scale every old
// ReplicaSet to 0; while any old pod still exists (terminating included)
// or an old ReplicaSet reports replicas, wait; then create the new
// ReplicaSet and scale it to spec.replicas.
func (dc *deploymentController) rolloutRecreate(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet, pods map[types.UID][]*corev1.Pod) error {
	newRS, oldRSs, err := dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	all := append(oldRSs, newRS)
	scaledDown := false
	for _, rs := range filterActive(oldRSs) {
		scaled, _, err := dc.scaleReplicaSet(ctx, rs, 0, d, false)
		if err != nil {
			return err
		}
		scaledDown = scaledDown || scaled
	}
	if scaledDown || oldPodsRunning(newRS, oldRSs, pods) {
		return dc.syncRolloutStatus(ctx, all, newRS, d)
	}
	if newRS == nil {
		if newRS, oldRSs, err = dc.getAllReplicaSetsAndSyncRevision(ctx, d, rsList, true); err != nil {
			return err
		}
		all = append(oldRSs, newRS)
	}
	if _, _, err := dc.scaleReplicaSet(ctx, newRS, *d.Spec.Replicas, d, false); err != nil {
		return err
	}
	if deploymentComplete(d, &d.Status) {
		if err := dc.cleanupDeployment(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncRolloutStatus(ctx, all, newRS, d)
}

// oldPodsRunning: an old ReplicaSet reports replicas, or an old pod exists
// that is not Failed or Succeeded.
func oldPodsRunning(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet, pods map[types.UID][]*corev1.Pod) bool {
	if sumStatus(oldRSs, func(s appsv1.ReplicaSetStatus) int32 { return s.Replicas }) > 0 {
		return true
	}
	for uid, list := range pods {
		if newRS != nil && newRS.UID == uid {
			continue
		}
		for _, p := range list {
			if !isPodTerminal(p) {
				return true
			}
		}
	}
	return false
}
