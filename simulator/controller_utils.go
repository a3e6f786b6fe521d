package simulator

import (
	"math"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pod helpers after k8s.io/kubernetes pkg/api/v1/pod/util.go and
// pkg/controller/controller_utils.go.

// podReadyCondition is the pod's Ready condition, or nil.
func podReadyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// isPodReady: the Ready condition is True.
func isPodReady(p *corev1.Pod) bool {
	c := podReadyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// isPodAvailable: ready for at least minReadySeconds at now (IsPodAvailable).
func isPodAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	if !isPodReady(p) {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	c := podReadyCondition(p)
	return !c.LastTransitionTime.IsZero() &&
		!c.LastTransitionTime.Add(time.Duration(minReadySeconds)*time.Second).After(now)
}

// nextAvailabilityCheck is how long until a ready pod becomes available,
// or nil (nextPodAvailabilityCheck).
func nextAvailabilityCheck(p *corev1.Pod, minReadySeconds int32, now time.Time) *time.Duration {
	if !isPodReady(p) || minReadySeconds <= 0 {
		return nil
	}
	c := podReadyCondition(p)
	if c.LastTransitionTime.IsZero() {
		return nil
	}
	d := c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second).Sub(now)
	if d <= 0 {
		return nil
	}
	return &d
}

func isPodTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
}

// isPodActive: not terminal and not being deleted (IsPodActive).
func isPodActive(p *corev1.Pod) bool { return !isPodTerminal(p) && p.DeletionTimestamp == nil }

// isPodTerminating: being deleted but not terminal (IsPodTerminating).
func isPodTerminating(p *corev1.Pod) bool { return !isPodTerminal(p) && p.DeletionTimestamp != nil }

var podPhaseOrdinal = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

// rankedPods orders pods to delete first (ActivePodsWithRanks): unassigned
// < assigned; Pending < Unknown < Running; not ready < ready; more
// colocated pods of the same owner < fewer; ready for a shorter time <
// longer (log2 buckets); more restarts < fewer; newer < older (log2
// buckets); then UID. Pod deletion cost is not modelled.
type rankedPods struct {
	pods []*corev1.Pod
	rank []int
	now  time.Time
}

func (s rankedPods) Len() int { return len(s.pods) }

func (s rankedPods) Swap(i, j int) {
	s.pods[i], s.pods[j] = s.pods[j], s.pods[i]
	s.rank[i], s.rank[j] = s.rank[j], s.rank[i]
}

func (s rankedPods) Less(i, j int) bool {
	a, b := s.pods[i], s.pods[j]
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if podPhaseOrdinal[a.Status.Phase] != podPhaseOrdinal[b.Status.Phase] {
		return podPhaseOrdinal[a.Status.Phase] < podPhaseOrdinal[b.Status.Phase]
	}
	if isPodReady(a) != isPodReady(b) {
		return !isPodReady(a)
	}
	if s.rank[i] != s.rank[j] {
		return s.rank[i] > s.rank[j]
	}
	if isPodReady(a) && isPodReady(b) {
		ta, tb := podReadyCondition(a).LastTransitionTime, podReadyCondition(b).LastTransitionTime
		if !ta.Equal(&tb) {
			if d := logRankDiff(ta, tb, s.now); d != 0 {
				return d < 0
			}
			return a.UID < b.UID
		}
	}
	if ra, rb := maxRestarts(a), maxRestarts(b); ra != rb {
		return ra > rb
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		if d := logRankDiff(a.CreationTimestamp, b.CreationTimestamp, s.now); d != 0 {
			return d < 0
		}
		return a.UID < b.UID
	}
	return false
}

// logRankDiff compares how long ago two times were in base-2 log buckets
// of nanoseconds (logarithmicRankDiff): negative when t1 is more recent.
func logRankDiff(t1, t2 metav1.Time, now time.Time) int64 {
	r := func(t metav1.Time) int64 {
		if d := now.Sub(t.Time); d > 0 {
			return int64(math.Log2(float64(d)))
		}
		return -1
	}
	return r(t1) - r(t2)
}

func maxRestarts(p *corev1.Pod) int32 {
	var m int32
	for _, c := range p.Status.ContainerStatuses {
		m = max(m, c.RestartCount)
	}
	return m
}

// podsToDelete picks diff pods, worst first (getPodsToDelete with
// getPodsRankedByRelatedPodsOnSameNode over the owner's active pods).
func podsToDelete(active []*corev1.Pod, diff int, now time.Time) []*corev1.Pod {
	if diff >= len(active) {
		return active
	}
	onNode := map[string]int{}
	for _, p := range active {
		onNode[p.Spec.NodeName]++
	}
	ranked := rankedPods{pods: append([]*corev1.Pod(nil), active...), rank: make([]int, len(active)), now: now}
	for i, p := range ranked.pods {
		ranked.rank[i] = onNode[p.Spec.NodeName]
	}
	sort.Sort(ranked)
	return ranked.pods[:diff]
}
