package simulator

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	intstrutil "k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The DaemonSet model's rolling update and history: kubernetes/kubernetes
// v1.37.2 pkg/controller/daemon/update.go and daemon/util/daemonset_util.go.
// Nodes are visited in name order where upstream ranges over a map (an
// order Go randomises): same seed, same run.

// rollingUpdate mirrors rollingUpdate. Without surge: old pods are deleted
// (and recreated by manage) while fewer than maxUnavailable nodes are
// unavailable; an old pod that is not available may always go. With surge:
// a new pod is created beside an old one on up to maxSurge nodes at once
// (at once where the old pod is not available), and the old pod is
// deleted once the new one is available.
func (dsc *daemonSetsController) rollingUpdate(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string) error {
	nodeToPods, err := dsc.getNodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return err
	}
	maxSurge, maxUnavailable, desired, err := updatedDesiredNodeCounts(ds, nodes, nodeToPods)
	if err != nil {
		return fmt.Errorf("couldn't get unavailable numbers for daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	now, minReady := dsc.s.now, ds.Spec.MinReadySeconds
	if maxSurge == 0 {
		numUnavailable := 0
		var allowed, candidates []string
		for _, name := range sortedKeys(nodeToPods) {
			newPod, oldPod, ok := findUpdatedPodsOnNode(nodeToPods[name], hash)
			switch {
			case !ok, oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
				numUnavailable++
			case newPod != nil:
				if !isPodAvailable(newPod, minReady, now) {
					numUnavailable++
				}
			case !isPodAvailable(oldPod, minReady, now):
				allowed = append(allowed, oldPod.Name)
				numUnavailable++
			case numUnavailable >= maxUnavailable:
			default:
				candidates = append(candidates, oldPod.Name)
			}
		}
		remaining := min(max(maxUnavailable-numUnavailable, 0), len(candidates))
		return dsc.syncNodes(ctx, ds, append(allowed, candidates[:remaining]...), nil, hash)
	}
	nodeByName := map[string]*corev1.Node{}
	for _, n := range nodes {
		nodeByName[n.Name] = n
	}
	shouldRun := func(name string) (bool, error) {
		n := nodeByName[name]
		if n == nil {
			return false, fmt.Errorf("couldn't get node for nodeName %q", name)
		}
		run, _ := nodeShouldRunDaemonPod(n, ds)
		return run, nil
	}
	var oldToDelete, shouldNotRunToDelete, candidateNew, allowedNew []string
	numSurge, numAvailable := 0, 0
	for _, name := range sortedKeys(nodeToPods) {
		newPod, oldPod, ok := findUpdatedPodsOnNode(nodeToPods[name], hash)
		if !ok {
			numSurge++
			continue
		}
		if (oldPod != nil && isPodAvailable(oldPod, minReady, now)) || (oldPod == nil && newPod != nil && isPodAvailable(newPod, minReady, now)) {
			numAvailable++
		}
		switch {
		case oldPod == nil:
		case newPod == nil:
			run, err := shouldRun(name)
			if err != nil {
				return err
			}
			switch {
			case !isPodAvailable(oldPod, minReady, now) && !run:
				oldToDelete = append(oldToDelete, oldPod.Name)
			case !isPodAvailable(oldPod, minReady, now):
				allowedNew = append(allowedNew, name)
			case !run:
				shouldNotRunToDelete = append(shouldNotRunToDelete, oldPod.Name)
			case numSurge >= maxSurge:
			default:
				candidateNew = append(candidateNew, name)
			}
		default:
			if !isPodAvailable(newPod, minReady, now) {
				numSurge++
				continue
			}
			oldToDelete = append(oldToDelete, oldPod.Name)
		}
	}
	if deletable := min(numAvailable-desired, len(shouldNotRunToDelete)); deletable > 0 {
		oldToDelete = append(oldToDelete, shouldNotRunToDelete[:deletable]...)
	}
	remaining := min(max(maxSurge-numSurge, 0), len(candidateNew))
	return dsc.syncNodes(ctx, ds, oldToDelete, append(allowedNew, candidateNew[:remaining]...), hash)
}

// findUpdatedPodsOnNode mirrors findUpdatedPodsOnNode: the node's one new
// and one old pod (not being deleted), ok=false when there are more.
func findUpdatedPodsOnNode(pods []*corev1.Pod, hash string) (newPod, oldPod *corev1.Pod, ok bool) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if hash != "" && p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hash {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = p
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = p
		}
	}
	return newPod, oldPod, true
}

// updatedDesiredNodeCounts mirrors updatedDesiredNodeCounts: maxSurge
// (rounded up, 0 unless RollingUpdate), maxUnavailable (rounded up) and
// the desired number, with every node that should run a pod present in
// nodeToPods; surge and unavailability both 0 means unavailability 1.
func updatedDesiredNodeCounts(ds *appsv1.DaemonSet, nodes []*corev1.Node, nodeToPods map[string][]*corev1.Pod) (maxSurge, maxUnavailable, desired int, err error) {
	for _, n := range nodes {
		if run, _ := nodeShouldRunDaemonPod(n, ds); !run {
			continue
		}
		desired++
		if _, ok := nodeToPods[n.Name]; !ok {
			nodeToPods[n.Name] = nil
		}
	}
	if maxUnavailable, err = unavailableCount(ds, desired); err != nil {
		return -1, -1, -1, fmt.Errorf("invalid value for MaxUnavailable: %w", err)
	}
	if maxSurge, err = surgeCount(ds, desired); err != nil {
		return -1, -1, -1, fmt.Errorf("invalid value for MaxSurge: %w", err)
	}
	if desired > 0 && maxUnavailable == 0 && maxSurge == 0 {
		maxUnavailable = 1
	}
	return maxSurge, maxUnavailable, desired, nil
}

// allowsSurge mirrors util.AllowsSurge.
func allowsSurge(ds *appsv1.DaemonSet) bool {
	n, err := surgeCount(ds, 1)
	return err == nil && n > 0
}

// surgeCount mirrors util.SurgeCount.
func surgeCount(ds *appsv1.DaemonSet, numberToSchedule int) (int, error) {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil || ru.MaxSurge == nil {
		return 0, nil
	}
	return intstrutil.GetScaledValueFromIntOrPercent(ru.MaxSurge, numberToSchedule, true)
}

// unavailableCount mirrors util.UnavailableCount.
func unavailableCount(ds *appsv1.DaemonSet, numberToSchedule int) (int, error) {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType || ru == nil {
		return 0, nil
	}
	return intstrutil.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, numberToSchedule, true)
}

// constructHistory mirrors constructHistory: the DaemonSet's revisions
// split into the one(s) matching its template and the old ones; a
// missing current revision is created (snapshot), duplicates are
// deduplicated, and the current one is renumbered above every old one.
func (dsc *daemonSetsController) constructHistory(ctx context.Context, ds *appsv1.DaemonSet) (cur *appsv1.ControllerRevision, old []*appsv1.ControllerRevision, err error) {
	histories, err := ownedRevisions(ctx, dsc.c, ds)
	if err != nil {
		return nil, nil, err
	}
	patch, err := templatePatch(ds.Spec)
	if err != nil {
		return nil, nil, fmt.Errorf("daemonset %s/%s: encode template: %w", ds.Namespace, ds.Name, err)
	}
	var current []*appsv1.ControllerRevision
	for _, h := range histories {
		if _, ok := h.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]; !ok {
			h = h.DeepCopy()
			if h.Labels == nil {
				h.Labels = map[string]string{}
			}
			h.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = h.Name
			if err := dsc.c.Update(ctx, h); err != nil {
				return nil, nil, fmt.Errorf("label controllerrevision %s/%s: %w", h.Namespace, h.Name, err)
			}
		}
		if bytes.Equal(patch, h.Data.Raw) { // Match
			current = append(current, h)
		} else {
			old = append(old, h)
		}
	}
	next := maxHistoryRevision(old) + 1
	if len(current) == 0 {
		cur, err = dsc.snapshot(ctx, ds, patch, next)
		return cur, old, err
	}
	if cur, err = dsc.dedupCurHistories(ctx, ds, current); err != nil {
		return nil, nil, err
	}
	if cur.Revision < next {
		toUpdate := cur.DeepCopy()
		toUpdate.Revision = next
		if err := dsc.c.Update(ctx, toUpdate); err != nil {
			return nil, nil, fmt.Errorf("renumber controllerrevision %s/%s: %w", cur.Namespace, cur.Name, err)
		}
	}
	return cur, old, nil
}

func maxHistoryRevision(hs []*appsv1.ControllerRevision) int64 {
	m := int64(0)
	for _, h := range hs {
		m = max(m, h.Revision)
	}
	return m
}

// dedupCurHistories mirrors dedupCurHistories: keep the highest revision,
// relabel pods of the others to its hash, delete the others.
func (dsc *daemonSetsController) dedupCurHistories(ctx context.Context, ds *appsv1.DaemonSet, cur []*appsv1.ControllerRevision) (*appsv1.ControllerRevision, error) {
	if len(cur) == 1 {
		return cur[0], nil
	}
	keep := cur[0]
	for _, h := range cur {
		if h.Revision >= keep.Revision {
			keep = h
		}
	}
	nodeToPods, err := dsc.getNodesToDaemonPods(ctx, ds, true)
	if err != nil {
		return nil, err
	}
	keepHash := keep.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	for _, name := range sortedKeys(nodeToPods) {
		for _, p := range nodeToPods[name] {
			if p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == keepHash {
				continue
			}
			patch := client.RawPatch("application/merge-patch+json",
				[]byte(fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, appsv1.DefaultDaemonSetUniqueLabelKey, keepHash)))
			if err := dsc.c.Patch(ctx, p.DeepCopy(), patch); err != nil {
				return nil, fmt.Errorf("relabel pod %s/%s: %w", p.Namespace, p.Name, err)
			}
		}
	}
	for _, h := range cur {
		if h.Name != keep.Name {
			if err := dsc.c.Delete(ctx, h.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("delete duplicate controllerrevision %s/%s: %w", h.Namespace, h.Name, err)
			}
		}
	}
	return keep, nil
}

// snapshot mirrors snapshot: a ControllerRevision "<ds>-<hash>" of the
// template, labelled like it plus controller-revision-hash. On a name taken
// by another template the DaemonSet's collisionCount is raised (the next
// sync retries with a new hash).
func (dsc *daemonSetsController) snapshot(ctx context.Context, ds *appsv1.DaemonSet, patch []byte, revision int64) (*appsv1.ControllerRevision, error) {
	hash := podTemplateHash(&ds.Spec.Template, ds.Status.CollisionCount)
	labels := map[string]string{}
	for k, v := range ds.Spec.Template.Labels {
		labels[k] = v
	}
	labels[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	h := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: ds.Name + "-" + hash, Labels: labels, Annotations: ds.Annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, daemonSetKind)}},
		Data:     runtime.RawExtension{Raw: patch},
		Revision: revision,
	}
	err := dsc.c.Create(ctx, h)
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return nil, fmt.Errorf("create controllerrevision %s/%s: %w", h.Namespace, h.Name, err)
		}
		return h, nil
	}
	existing := &appsv1.ControllerRevision{}
	if err := dsc.c.Get(ctx, client.ObjectKeyFromObject(h), existing); err != nil {
		return nil, err
	}
	if bytes.Equal(patch, existing.Data.Raw) {
		return existing, nil
	}
	curDS := &appsv1.DaemonSet{}
	if err := dsc.c.Get(ctx, client.ObjectKeyFromObject(ds), curDS); err != nil {
		return nil, err
	}
	if !reflect.DeepEqual(curDS.Status.CollisionCount, ds.Status.CollisionCount) {
		return nil, fmt.Errorf("found a stale collision count of daemonset %s/%s; will retry until it is updated", ds.Namespace, ds.Name)
	}
	if curDS.Status.CollisionCount == nil {
		curDS.Status.CollisionCount = new(int32)
	}
	*curDS.Status.CollisionCount++
	if err := dsc.c.Status().Update(ctx, curDS); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("controllerrevision %s/%s: hash collision, collisionCount raised to %d", h.Namespace, h.Name, *curDS.Status.CollisionCount)
}

// cleanupHistory mirrors cleanupHistory: old revisions beyond
// revisionHistoryLimit that no pod (terminal ones included) carries are
// deleted, lowest revision first.
func (dsc *daemonSetsController) cleanupHistory(ctx context.Context, ds *appsv1.DaemonSet, old []*appsv1.ControllerRevision) error {
	toKill := len(old) - int(*ds.Spec.RevisionHistoryLimit)
	if toKill <= 0 {
		return nil
	}
	nodeToPods, err := dsc.getNodesToDaemonPods(ctx, ds, true)
	if err != nil {
		return err
	}
	live := map[string]bool{}
	for _, pods := range nodeToPods {
		for _, p := range pods {
			if h := p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]; h != "" {
				live[h] = true
			}
		}
	}
	sort.SliceStable(old, func(i, j int) bool { return old[i].Revision < old[j].Revision })
	for _, h := range old {
		if toKill <= 0 {
			break
		}
		if live[h.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]] {
			continue
		}
		if err := dsc.c.Delete(ctx, h.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		toKill--
	}
	return nil
}
