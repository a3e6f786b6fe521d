package simulator

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The core of the StatefulSet controller model: kubernetes/kubernetes
// v1.37.2 pkg/controller/statefulset/stateful_set_control.go.

// updateStatefulSet mirrors defaultStatefulSetControl.updateStatefulSet:
// status from the pods listed at the start; pods split into replicas (by
// ordinal, missing ones built at their revision) and condemned (ordinals
// beyond the range, highest first); each replica processed (in ordinal
// order, stopping at the first that blocks in OrderedReady mode), then the
// condemned; then, for RollingUpdate, the rolling update proper.
func (ssc *statefulSetController) updateStatefulSet(ctx context.Context, set *appsv1.StatefulSet, currentRevision, updateRevision *appsv1.ControllerRevision,
	collisionCount int32, pods []*corev1.Pod, now time.Time) (*appsv1.StatefulSetStatus, error) {
	currentSet, err := applyRevision(set, currentRevision)
	if err != nil {
		return nil, err
	}
	updateSet, err := applyRevision(set, updateRevision)
	if err != nil {
		return nil, err
	}
	if set.Spec.UpdateStrategy.Type == appsv1.RecreateStatefulSetStrategyType {
		return nil, fmt.Errorf("statefulset %s/%s uses Recreate strategy but feature gate StatefulSetRecreateStrategy is disabled", set.Namespace, set.Name)
	}
	status := appsv1.StatefulSetStatus{ObservedGeneration: set.Generation, CurrentRevision: currentRevision.Name,
		UpdateRevision: updateRevision.Name, CollisionCount: ptr.To(collisionCount)}
	status.Conditions = append(status.Conditions, set.Status.Conditions...)
	updateStatus(&status, set.Spec.MinReadySeconds, currentRevision, updateRevision, now, pods)

	replicas, condemned := ssc.partitionPods(set, currentSet, updateSet, currentRevision, updateRevision, pods)
	firstUnavailable := firstUnavailablePod(replicas, condemned, set.Spec.MinReadySeconds, now)
	if set.DeletionTimestamp != nil {
		return &status, nil
	}
	monotonic := !allowsBurst(set)
	done := func(err error) (*appsv1.StatefulSetStatus, error) {
		updateStatus(&status, set.Spec.MinReadySeconds, currentRevision, updateRevision, now, replicas, condemned)
		return &status, err
	}
	if exit, err := runForAll(replicas, func(i int) (bool, error) {
		return ssc.processReplica(ctx, set, updateSet, monotonic, replicas, i, now)
	}, monotonic); exit || err != nil {
		return done(err)
	}
	if exit, err := runForAll(condemned, func(i int) (bool, error) {
		return ssc.processCondemned(ctx, set, firstUnavailable, monotonic, condemned, i, now)
	}, monotonic); exit || err != nil {
		return done(err)
	}
	updateStatus(&status, set.Spec.MinReadySeconds, currentRevision, updateRevision, now, replicas, condemned)
	if set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return &status, nil
	}
	return ssc.updateStatefulSetAfterInvariantEstablished(ctx, set, replicas, updateRevision, status, now)
}

// partitionPods is the first part of updateStatefulSet: replicas indexed by
// ordinal - start (nil slots filled by newVersionedStatefulSetPod) and
// condemned pods in descending ordinal order; pods without an ordinal are
// ignored.
func (ssc *statefulSetController) partitionPods(set, currentSet, updateSet *appsv1.StatefulSet, currentRevision, updateRevision *appsv1.ControllerRevision,
	pods []*corev1.Pod) (replicas, condemned []*corev1.Pod) {
	replicas = make([]*corev1.Pod, int(*set.Spec.Replicas))
	for _, p := range pods {
		switch {
		case podInOrdinalRange(p, set):
			replicas[getOrdinal(p)-getStartOrdinal(set)] = p
		case getOrdinal(p) >= 0:
			condemned = append(condemned, p)
		}
	}
	for ord := getStartOrdinal(set); ord <= getEndOrdinal(set); ord++ {
		if i := ord - getStartOrdinal(set); replicas[i] == nil {
			replicas[i] = newVersionedStatefulSetPod(currentSet, updateSet, currentRevision.Name, updateRevision.Name, ord)
		}
	}
	sortDescendingOrdinal(condemned)
	return replicas, condemned
}

// firstUnavailablePod is updateStatefulSet's "first unhealthy Pod": the
// lowest unavailable replica, else the lowest unavailable condemned pod.
func firstUnavailablePod(replicas, condemned []*corev1.Pod, minReadySeconds int32, now time.Time) *corev1.Pod {
	for _, p := range replicas {
		if isUnavailable(p, minReadySeconds, now) {
			return p
		}
	}
	for i := len(condemned) - 1; i >= 0; i-- {
		if isUnavailable(condemned[i], minReadySeconds, now) {
			return condemned[i]
		}
	}
	return nil
}

// computeReplicaStatus mirrors computeReplicaStatus: replicas counts
// created pods (terminating ones included), ready / available count
// running-and-ready pods, current / updated count created pods that are
// not terminating by their controller-revision-hash.
func computeReplicaStatus(pods []*corev1.Pod, minReadySeconds int32, currentRevision, updateRevision *appsv1.ControllerRevision, now time.Time) (replicas, ready, available, current, updated int32) {
	for _, p := range pods {
		if isCreated(p) {
			replicas++
		}
		if isRunningAndReady(p) {
			ready++
			if isRunningAndAvailable(p, minReadySeconds, now) {
				available++
			}
		}
		if isCreated(p) && !isTerminating(p) {
			switch rev := getPodRevision(p); {
			case rev == currentRevision.Name && rev == updateRevision.Name:
				current++
				updated++
			case rev == currentRevision.Name:
				current++
			case rev == updateRevision.Name:
				updated++
			}
		}
	}
	return
}

// updateStatus mirrors updateStatus: the counters summed over podLists.
func updateStatus(st *appsv1.StatefulSetStatus, minReadySeconds int32, currentRevision, updateRevision *appsv1.ControllerRevision, now time.Time, podLists ...[]*corev1.Pod) {
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas, st.UpdatedReplicas = 0, 0, 0, 0, 0
	for _, list := range podLists {
		r, rd, a, c, u := computeReplicaStatus(list, minReadySeconds, currentRevision, updateRevision, now)
		st.Replicas += r
		st.ReadyReplicas += rd
		st.AvailableReplicas += a
		st.CurrentReplicas += c
		st.UpdatedReplicas += u
	}
}

// processReplica mirrors processReplica: a failed or succeeded pod is
// deleted (and recreated on a later sync); a missing pod is created (in
// OrderedReady mode the sync stops there); in OrderedReady mode a
// terminating, not running-and-ready or not yet available pod blocks the
// sync; otherwise the pod's identity is enforced.
func (ssc *statefulSetController) processReplica(ctx context.Context, set, updateSet *appsv1.StatefulSet, monotonic bool, replicas []*corev1.Pod, i int, now time.Time) (bool, error) {
	pod := replicas[i]
	if isPodTerminal(pod) {
		if pod.DeletionTimestamp == nil {
			if err := ssc.deleteStatefulPod(ctx, set, pod); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	if !isCreated(pod) {
		if err := ssc.createStatefulPod(ctx, set, pod); err != nil {
			return true, err
		}
		if monotonic {
			return true, nil
		}
	}
	if monotonic && (isTerminating(pod) || !isRunningAndReady(pod) || !isRunningAndAvailable(pod, set.Spec.MinReadySeconds, now)) {
		return true, nil
	}
	if identityMatches(set, pod) {
		return false, nil
	}
	return false, ssc.updateStatefulPod(ctx, updateSet, pod.DeepCopy())
}

// processCondemned mirrors processCondemned: in OrderedReady mode a
// terminating condemned pod blocks, and so does one that is not running,
// ready and available unless it is the first unhealthy pod; else it is
// deleted (and in OrderedReady mode the sync stops).
func (ssc *statefulSetController) processCondemned(ctx context.Context, set *appsv1.StatefulSet, firstUnhealthy *corev1.Pod, monotonic bool, condemned []*corev1.Pod, i int, now time.Time) (bool, error) {
	pod := condemned[i]
	if isTerminating(pod) {
		return monotonic, nil
	}
	if monotonic && pod != firstUnhealthy &&
		(!isRunningAndReady(pod) || !isRunningAndAvailable(pod, set.Spec.MinReadySeconds, now)) {
		return true, nil
	}
	return true, ssc.deleteStatefulPod(ctx, set, pod)
}

// runForAll mirrors runForAll: in OrderedReady (monotonic) mode fn runs
// pod by pod until one asks to exit; in Parallel mode on every pod in
// slow-start batches (1, 2, 4, ...; upstream's slowStartBatch runs a batch
// concurrently, the model in order), stopping after a batch with an error.
func runForAll(pods []*corev1.Pod, fn func(i int) (bool, error), monotonic bool) (bool, error) {
	if monotonic {
		for i := range pods {
			if exit, err := fn(i); exit || err != nil {
				return true, err
			}
		}
		return false, nil
	}
	for j, batch := 0, 1; j < len(pods); batch = min(2*batch, MaxStatefulSetBatchSize) {
		var errs []error
		for end := min(j+batch, len(pods)); j < end; j++ {
			if _, err := fn(j); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return true, errors.Join(errs...)
		}
	}
	return false, nil
}

// MaxStatefulSetBatchSize caps a Parallel sync's slow-start batch
// (stateful_set_control.go MaxBatchSize).
const MaxStatefulSetBatchSize = 500

// updateStatefulSetAfterInvariantEstablished mirrors the function of that
// name (the MaxUnavailableStatefulSet path, on by default in 1.37): with
// unavailable replicas at or above maxUnavailable nothing more is deleted
// (Parallel mode may still replace old unavailable pods); otherwise old-
// revision pods at or above the partition are deleted from the highest
// ordinal down, within the budget. Parallel mode deletes old unavailable
// pods first, then available ones.
func (ssc *statefulSetController) updateStatefulSetAfterInvariantEstablished(ctx context.Context, set *appsv1.StatefulSet, replicas []*corev1.Pod,
	updateRevision *appsv1.ControllerRevision, status appsv1.StatefulSetStatus, now time.Time) (*appsv1.StatefulSetStatus, error) {
	minReady := set.Spec.MinReadySeconds
	updateMin, maxUnavailable := 0, 1
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		updateMin = int(*ru.Partition)
		var err error
		if maxUnavailable, err = getStatefulSetMaxUnavailable(ru.MaxUnavailable, int(*set.Spec.Replicas)); err != nil {
			return &status, err
		}
	}
	parallel := set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement
	old := func(p *corev1.Pod) bool { return getPodRevision(p) != updateRevision.Name }
	unavailable, unavailableNeedingUpdate := 0, 0
	for _, p := range replicas {
		if isUnavailable(p, minReady, now) {
			unavailable++
			if parallel && old(p) && !isTerminating(p) {
				unavailableNeedingUpdate++
			}
		}
	}
	if unavailable >= maxUnavailable && unavailableNeedingUpdate == 0 {
		return &status, nil
	}
	del := func(p *corev1.Pod) error {
		if err := ssc.deleteStatefulPod(ctx, set, p); err != nil {
			return err
		}
		status.CurrentReplicas--
		return nil
	}
	if parallel {
		for t := len(replicas) - 1; t >= updateMin; t-- {
			if p := replicas[t]; old(p) && !isRunningAndAvailable(p, minReady, now) && !isTerminating(p) {
				if err := del(p); err != nil {
					return &status, err
				}
			}
		}
		budget := maxUnavailable - unavailable
		for t := len(replicas) - 1; t >= updateMin && budget > 0; t-- {
			if p := replicas[t]; old(p) && !isUnavailable(p, minReady, now) {
				if err := del(p); err != nil {
					return &status, err
				}
				budget--
			}
		}
		return &status, nil
	}
	toDelete, deleted := maxUnavailable-unavailable, 0
	for t := len(replicas) - 1; t >= updateMin && deleted < toDelete; t-- {
		if p := replicas[t]; old(p) && !isTerminating(p) {
			if err := del(p); err != nil {
				return &status, err
			}
			deleted++
		}
	}
	return &status, nil
}
