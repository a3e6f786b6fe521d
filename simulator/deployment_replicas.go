package simulator

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// maxRevisionHistoryChars bounds the revision-history annotation.
const maxRevisionHistoryChars = 2000

// newRSNewReplicas is the size the new ReplicaSet may grow to now
// (NewRSNewReplicas): for RollingUpdate up to spec+maxSurge pods in total
// over all ReplicaSets (in spec counts), never beyond spec; for Recreate spec.
func newRSNewReplicas(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	if !isRollingUpdate(d) {
		return *d.Spec.Replicas
	}
	surge, _ := intstr.GetScaledValueFromIntOrPercent(d.Spec.Strategy.RollingUpdate.MaxSurge, int(*d.Spec.Replicas), true)
	current := sumSpecReplicas(all)
	maxTotal := *d.Spec.Replicas + int32(surge)
	if current >= maxTotal {
		return *newRS.Spec.Replicas
	}
	up := min(maxTotal-current, *d.Spec.Replicas-*newRS.Spec.Replicas)
	return *newRS.Spec.Replicas + up
}

// isSaturated: the ReplicaSet owns all desired replicas, all available (IsSaturated).
func isSaturated(d *appsv1.Deployment, rs *appsv1.ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, err := strconv.Atoi(rs.Annotations[DesiredReplicasAnnotation])
	return err == nil && *rs.Spec.Replicas == *d.Spec.Replicas && int32(desired) == *d.Spec.Replicas &&
		rs.Status.AvailableReplicas == *d.Spec.Replicas
}

// findActiveOrLatest is the only active ReplicaSet, or the newest when none
// is active, or nil when several are (FindActiveOrLatest).
func findActiveOrLatest(newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(old) == 0 {
		return nil
	}
	sorted := append([]*appsv1.ReplicaSet(nil), old...)
	rsByCreation(sorted)
	for i, j := 0, len(sorted)-1; i < j; i, j = i+1, j-1 {
		sorted[i], sorted[j] = sorted[j], sorted[i]
	}
	active := filterActive(append(sorted, newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return sorted[0]
	case 1:
		return active[0]
	}
	return nil
}

// rsProportion is a ReplicaSet's share of replicas to add (or remove) in
// a proportional scale (GetReplicaSetProportion, getReplicaSetFraction).
func rsProportion(rs *appsv1.ReplicaSet, d *appsv1.Deployment, toAdd, added int32) int32 {
	if rs == nil || *rs.Spec.Replicas == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	var fraction int32
	if *d.Spec.Replicas == 0 {
		fraction = -*rs.Spec.Replicas
	} else {
		before, err := strconv.ParseUint(rs.Annotations[MaxReplicasAnnotation], 10, 32)
		base := int32(before)
		if err != nil || base == 0 {
			base = d.Status.Replicas
		}
		if base != 0 {
			size := float64(*rs.Spec.Replicas*(*d.Spec.Replicas+maxSurge(d))) / float64(base)
			fraction = int32(math.Round(size)) - *rs.Spec.Replicas
		}
	}
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

// sortForProportionalScale orders ReplicaSets largest first; on ties newer
// first when scaling up, older first when scaling down
// (ReplicaSetsBySizeNewer / ReplicaSetsBySizeOlder).
func sortForProportionalScale(rss []*appsv1.ReplicaSet, up bool) {
	sort.SliceStable(rss, func(i, j int) bool {
		a, b := rss[i], rss[j]
		if *a.Spec.Replicas != *b.Spec.Replicas {
			return *a.Spec.Replicas > *b.Spec.Replicas
		}
		older := a.CreationTimestamp.Before(&b.CreationTimestamp) ||
			(a.CreationTimestamp.Equal(&b.CreationTimestamp) && a.Name < b.Name)
		return older != up
	})
}

// deploymentComplete: all desired replicas updated and available, none
// old, generation observed (DeploymentComplete).
func deploymentComplete(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	r := *d.Spec.Replicas
	return st.UpdatedReplicas == r && st.Replicas == r && st.AvailableReplicas == r &&
		st.ObservedGeneration >= d.Generation
}

// deploymentProgressing: more updated, fewer old, more ready or more
// available than the Deployment's current status (DeploymentProgressing).
func deploymentProgressing(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	old := d.Status
	return st.UpdatedReplicas > old.UpdatedReplicas ||
		st.Replicas-st.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		st.ReadyReplicas > old.ReadyReplicas || st.AvailableReplicas > old.AvailableReplicas
}

// deploymentTimedOut: the Progressing condition was last updated more than
// progressDeadlineSeconds ago, or already says so (DeploymentTimedOut).
func deploymentTimedOut(d *appsv1.Deployment, st *appsv1.DeploymentStatus, now time.Time) bool {
	if !hasProgressDeadline(d) {
		return false
	}
	c := getDeploymentCondition(*st, appsv1.DeploymentProgressing)
	switch {
	case c == nil, c.Reason == ReasonNewRSAvailable:
		return false
	case c.Reason == ReasonTimedOut:
		return true
	}
	return c.LastUpdateTime.Add(timeDuration(*d.Spec.ProgressDeadlineSeconds)).Before(now)
}

// setReplicasAnnotations records desired and max replicas on a ReplicaSet.
func setReplicasAnnotations(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range map[string]int32{DesiredReplicasAnnotation: desired, MaxReplicasAnnotation: maxReplicas} {
		if s := strconv.Itoa(int(v)); rs.Annotations[k] != s {
			rs.Annotations[k] = s
			changed = true
		}
	}
	return changed
}

func replicasAnnotationsNeedUpdate(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	return rs.Annotations[DesiredReplicasAnnotation] != strconv.Itoa(int(desired)) ||
		rs.Annotations[MaxReplicasAnnotation] != strconv.Itoa(int(maxReplicas))
}

// setNewReplicaSetAnnotations copies the Deployment's annotations, raises
// the revision (keeping earlier ones in revision-history) and, for a
// ReplicaSet about to be created, records replicas (SetNewReplicaSetAnnotations).
func setNewReplicaSetAnnotations(d *appsv1.Deployment, rs *appsv1.ReplicaSet, newRevision string, exists bool) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range d.Annotations {
		if cur, ok := rs.Annotations[k]; annotationsNotCopied[k] || (ok && cur == v) {
			continue
		}
		rs.Annotations[k], changed = v, true
	}
	oldRev, had := rs.Annotations[RevisionAnnotation]
	oldInt, err := strconv.ParseInt(oldRev, 10, 64)
	if err != nil && oldRev != "" {
		return false
	}
	newInt, _ := strconv.ParseInt(newRevision, 10, 64)
	if oldInt < newInt {
		rs.Annotations[RevisionAnnotation], changed = newRevision, true
		if had {
			appendRevisionHistory(rs, oldRev)
		}
	}
	if !exists && setReplicasAnnotations(rs, *d.Spec.Replicas, *d.Spec.Replicas+maxSurge(d)) {
		changed = true
	}
	return changed
}

func appendRevisionHistory(rs *appsv1.ReplicaSet, oldRev string) {
	hist := rs.Annotations[RevisionHistoryAnnotation]
	if hist == "" {
		rs.Annotations[RevisionHistoryAnnotation] = oldRev
		return
	}
	revs := strings.Split(hist, ",")
	total := len(hist) + len(oldRev) + 1
	start := 0
	for total > maxRevisionHistoryChars && start < len(revs) {
		total -= len(revs[start]) + 1
		start++
	}
	if total <= maxRevisionHistoryChars {
		rs.Annotations[RevisionHistoryAnnotation] = strings.Join(append(revs[start:], oldRev), ",")
	}
}
