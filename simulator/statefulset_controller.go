package simulator

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// StatefulSetControllerName names the StatefulSet controller model (see
// Sim.Controller).
const StatefulSetControllerName = "statefulset-controller"

// statefulSetController models kube-controller-manager's StatefulSet
// controller, kubernetes/kubernetes v1.37.2 pkg/controller/statefulset
// (stateful_set.go sync / syncStatefulSet, stateful_set_control.go
// UpdateStatefulSet and what it calls), with the feature gates at their
// 1.37 defaults: MaxUnavailableStatefulSet on, StatefulSetRecreateStrategy
// off. Each method names the upstream function it mirrors.
//
// Simplifications (also in simulator/README.md):
//   - reads are the store's, never stale: no consistency store, no
//     expectations; no adoption or release of pods or revisions by selector
//     (ownership is the controller reference);
//   - no PersistentVolumeClaims: volumeClaimTemplates create no claims and
//     pods get no claim volumes (updateStorage, the retention policy and
//     stale-claim checks are not modelled);
//   - setMatchesLatestExistingRevision (semantic revision comparison) is not
//     needed: the simulator's revision data is byte-stable;
//   - no conditions and no events; the Recreate strategy is refused as the
//     controller does with its feature gate off;
//   - pods of a burst (Parallel) sync are handled one after the other in
//     slow-start batches instead of concurrently.
type statefulSetController struct {
	s *Sim
	c *simClient
}

// Reconcile mirrors StatefulSetController.sync and syncStatefulSet.
func (ssc *statefulSetController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	set := &appsv1.StatefulSet{}
	if err := ssc.c.Get(ctx, req.NamespacedName, set); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if _, err := metav1.LabelSelectorAsSelector(set.Spec.Selector); err != nil {
		return reconcile.Result{}, nil // not transient: upstream does not retry either
	}
	pods, err := ssc.getPodsForStatefulSet(ctx, set)
	if err != nil {
		return reconcile.Result{}, err
	}
	now := ssc.s.now
	status, err := ssc.updateStatefulSetTop(ctx, set, pods, now)
	if err != nil {
		return reconcile.Result{}, err
	}
	// syncStatefulSet: re-check availability when the next ready pod
	// passes minReadySeconds.
	if set.Spec.MinReadySeconds > 0 && status != nil && status.ReadyReplicas != status.AvailableReplicas {
		next := timeDuration(set.Spec.MinReadySeconds)
		for _, p := range pods {
			if d := nextAvailabilityCheck(p, set.Spec.MinReadySeconds, now); d != nil && *d < next {
				next = *d
			}
		}
		return reconcile.Result{RequeueAfter: next}, nil
	}
	return reconcile.Result{}, nil
}

// getPodsForStatefulSet mirrors getPodsForStatefulSet: the pods it
// controls whose name says they are its members.
func (ssc *statefulSetController) getPodsForStatefulSet(ctx context.Context, set *appsv1.StatefulSet) ([]*corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := ssc.c.List(ctx, list, client.InNamespace(set.Namespace)); err != nil {
		return nil, fmt.Errorf("list pods of statefulset %s/%s: %w", set.Namespace, set.Name, err)
	}
	var pods []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == set.UID && isMemberOf(set, p) {
			pods = append(pods, p)
		}
	}
	return pods, nil
}

// updateStatefulSetTop mirrors defaultStatefulSetControl.UpdateStatefulSet:
// revisions listed and sorted, performUpdate, then truncateHistory.
func (ssc *statefulSetController) updateStatefulSetTop(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod, now time.Time) (*appsv1.StatefulSetStatus, error) {
	set = set.DeepCopy()
	revisions, err := ownedRevisions(ctx, ssc.c, set)
	if err != nil {
		return nil, err
	}
	sortControllerRevisions(revisions)
	current, update, status, err := ssc.performUpdate(ctx, set, pods, revisions, now)
	truncErr := ssc.truncateHistory(ctx, set, pods, revisions, current, update)
	if err != nil {
		return nil, errors.Join(err, truncErr)
	}
	return status, truncErr
}

// performUpdate mirrors performUpdate: revisions, updateStatefulSet, and
// the status write even when updateStatefulSet failed with a status.
func (ssc *statefulSetController) performUpdate(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod,
	revisions []*appsv1.ControllerRevision, now time.Time) (current, update *appsv1.ControllerRevision, status *appsv1.StatefulSetStatus, err error) {
	current, update, collisionCount, err := ssc.getStatefulSetRevisions(ctx, set, revisions)
	if err != nil {
		return current, update, nil, err
	}
	status, err = ssc.updateStatefulSet(ctx, set, current, update, collisionCount, pods, now)
	if err != nil && status == nil {
		return current, update, nil, err
	}
	statusErr := ssc.updateStatefulSetStatus(ctx, set, status)
	if err != nil {
		return current, update, status, err
	}
	return current, update, status, statusErr
}

// truncateHistory mirrors truncateHistory: revisions that are neither the
// current or update revision nor any pod's are deleted, oldest first,
// beyond revisionHistoryLimit.
func (ssc *statefulSetController) truncateHistory(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod,
	revisions []*appsv1.ControllerRevision, current, update *appsv1.ControllerRevision) error {
	live := map[string]bool{}
	if current != nil {
		live[current.Name] = true
	}
	if update != nil {
		live[update.Name] = true
	}
	for _, p := range pods {
		live[getPodRevision(p)] = true
	}
	var history []*appsv1.ControllerRevision
	for _, r := range revisions {
		if !live[r.Name] {
			history = append(history, r)
		}
	}
	limit := int(*set.Spec.RevisionHistoryLimit)
	if limit < 0 || len(history) <= limit {
		return nil
	}
	for _, r := range history[:len(history)-limit] {
		if err := ssc.c.Delete(ctx, r.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete controllerrevision %s/%s: %w", r.Namespace, r.Name, err)
		}
	}
	return nil
}

// getStatefulSetRevisions mirrors getStatefulSetRevisions: the update
// revision is the newest revision when it equals the set's template,
// an older equal revision renumbered (a rollback), or a new one; the
// current revision is status.currentRevision's, or the update revision.
func (ssc *statefulSetController) getStatefulSetRevisions(ctx context.Context, set *appsv1.StatefulSet,
	revisions []*appsv1.ControllerRevision) (current, update *appsv1.ControllerRevision, collisionCount int32, err error) {
	n := len(revisions)
	sortControllerRevisions(revisions)
	if set.Status.CollisionCount != nil {
		collisionCount = *set.Status.CollisionCount
	}
	update, err = newStatefulSetRevision(set, nextRevision(revisions), &collisionCount)
	if err != nil {
		return nil, nil, collisionCount, err
	}
	equal := findEqualRevisions(revisions, update)
	switch {
	case len(equal) > 0 && equalRevision(revisions[n-1], equal[len(equal)-1]):
		update = revisions[n-1]
	case len(equal) > 0:
		rev := update.Revision
		update = equal[len(equal)-1].DeepCopy()
		if update.Revision != rev {
			update.Revision = rev
			if err := ssc.c.Update(ctx, update); err != nil {
				return nil, nil, collisionCount, fmt.Errorf("renumber controllerrevision %s/%s: %w", update.Namespace, update.Name, err)
			}
		}
	default:
		if update, err = createControllerRevision(ctx, ssc.c, set, update, &collisionCount); err != nil {
			return nil, nil, collisionCount, err
		}
	}
	for _, r := range revisions {
		if r.Name == set.Status.CurrentRevision {
			current = r
			break
		}
	}
	if current == nil {
		current = update
	}
	return current, update, collisionCount, nil
}

// updateStatefulSetStatus mirrors updateStatefulSetStatus and
// realStatefulSetStatusUpdater.UpdateStatefulSetStatus: completeUpdate,
// no write when nothing changed, a conflict retried on a fresh read (up
// to 5 attempts, retry.DefaultRetry).
func (ssc *statefulSetController) updateStatefulSetStatus(ctx context.Context, set *appsv1.StatefulSet, status *appsv1.StatefulSetStatus) error {
	completeUpdate(set, status)
	if !inconsistentStatus(set, status) {
		return nil
	}
	set = set.DeepCopy()
	for attempt := 0; ; attempt++ {
		set.Status = *status.DeepCopy()
		err := ssc.c.Status().Update(ctx, set)
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt >= 4 {
			return fmt.Errorf("update status of statefulset %s/%s: %w", set.Namespace, set.Name, err)
		}
		if err := ssc.c.Get(ctx, client.ObjectKeyFromObject(set), set); err != nil {
			return fmt.Errorf("re-read statefulset %s/%s: %w", set.Namespace, set.Name, err)
		}
	}
}

// createStatefulPod mirrors StatefulPodControl.CreateStatefulPod (no
// claims). The caller's pod object is left as built, uncreated, as
// upstream's is: status counts it only once it is listed again.
func (ssc *statefulSetController) createStatefulPod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	if err := ssc.c.Create(ctx, pod.DeepCopy()); err != nil {
		return fmt.Errorf("create pod %s/%s of statefulset %s: %w", pod.Namespace, pod.Name, set.Name, err)
	}
	return nil
}

// updateStatefulPod mirrors StatefulPodControl.UpdateStatefulPod for the
// identity (the only invariant modelled).
func (ssc *statefulSetController) updateStatefulPod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	if identityMatches(set, pod) {
		return nil
	}
	updateIdentity(set, pod)
	if err := ssc.c.Update(ctx, pod); err != nil {
		return fmt.Errorf("update pod %s/%s of statefulset %s: %w", pod.Namespace, pod.Name, set.Name, err)
	}
	return nil
}

// deleteStatefulPod mirrors StatefulPodControl.DeleteStatefulPod: a
// graceful delete; NotFound is success.
func (ssc *statefulSetController) deleteStatefulPod(ctx context.Context, set *appsv1.StatefulSet, pod *corev1.Pod) error {
	if err := ssc.c.Delete(ctx, pod.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s/%s of statefulset %s: %w", pod.Namespace, pod.Name, set.Name, err)
	}
	return nil
}

// descendingOrdinal sorts pods by ordinal, highest first.
func sortDescendingOrdinal(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool { return getOrdinal(pods[i]) > getOrdinal(pods[j]) })
}
