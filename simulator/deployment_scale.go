package simulator

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
)

// scale is the scaling path (sync.go scale): the only active (or the
// newest) ReplicaSet takes spec.replicas; a saturated new ReplicaSet
// drains the old ones; otherwise, for RollingUpdate, the difference to
// spec+maxSurge is spread over the active ReplicaSets in proportion to
// their size, leftovers to the largest.
func (dc *deploymentController) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	if rs := findActiveOrLatest(newRS, oldRSs); rs != nil {
		if *rs.Spec.Replicas == *d.Spec.Replicas {
			return nil
		}
		_, _, err := dc.scaleReplicaSet(ctx, rs, *d.Spec.Replicas, d, false)
		return err
	}
	if isSaturated(d, newRS) {
		for _, old := range filterActive(oldRSs) {
			if _, _, err := dc.scaleReplicaSet(ctx, old, 0, d, false); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRollingUpdate(d) {
		return nil
	}
	active := filterActive(append(append([]*appsv1.ReplicaSet(nil), oldRSs...), newRS))
	var allowed int32
	if *d.Spec.Replicas > 0 {
		allowed = *d.Spec.Replicas + maxSurge(d)
	}
	toAdd := allowed - sumSpecReplicas(active)
	if toAdd != 0 {
		sortForProportionalScale(active, toAdd > 0)
	}
	sizes := make([]int32, len(active))
	var added int32
	for i, rs := range active {
		p := rsProportion(rs, d, toAdd, added)
		sizes[i] = *rs.Spec.Replicas + p
		added += p
	}
	for i, rs := range active {
		if i == 0 && toAdd != 0 {
			sizes[0] = max(0, sizes[0]+toAdd-added)
		}
		if _, _, err := dc.scaleReplicaSet(ctx, rs, sizes[i], d, true); err != nil {
			return err
		}
	}
	return nil
}
