package rollout

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// podKind is one pod state the exhaustive test combines.
type podKind struct {
	name        string
	hash        string
	terminating bool
	ready       bool
	readyFor    time.Duration // since the Ready transition, at now
}

var podKinds = []podKind{
	{name: "old-ready", hash: "old", ready: true, readyFor: time.Minute},
	{name: "old-terminating", hash: "old", terminating: true, ready: true, readyFor: time.Minute},
	{name: "new-ready-long", hash: "new", ready: true, readyFor: time.Minute},
	{name: "new-ready-1s", hash: "new", ready: true, readyFor: time.Second},
	{name: "new-not-ready", hash: "new"},
	{name: "new-terminating", hash: "new", terminating: true, ready: true, readyFor: time.Minute},
}

// multisets returns every multiset of at most n kinds (indices, sorted).
func multisets(kinds, n int) [][]int {
	out := [][]int{nil}
	var grow func(prefix []int, from, left int)
	grow = func(prefix []int, from, left int) {
		if left == 0 {
			return
		}
		for k := from; k < kinds; k++ {
			next := append(append([]int(nil), prefix...), k)
			out = append(out, next)
			grow(next, k, left-1)
		}
	}
	grow(nil, 0, n)
	return out
}

// convergedStatus is the status the ReplicaSet controller
// (replica_set_utils.go calculateStatus: active pods, IsPodAvailable) and
// then the Deployment controller (sync.go calculateStatus, sums over the
// ReplicaSets; terminatingReplicas counts pods with a deletionTimestamp)
// publish for exactly these pods, were nothing else to change.
func convergedStatus(d *appsv1.Deployment, pods []corev1.Pod, newHash string, now time.Time) appsv1.DeploymentStatus {
	st := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, TerminatingReplicas: ptr.To(int32(0))}
	for i := range pods {
		p := &pods[i]
		if p.DeletionTimestamp != nil {
			*st.TerminatingReplicas++
			continue
		}
		st.Replicas++
		if p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == newHash {
			st.UpdatedReplicas++
		}
		if podAvailable(p, d.Spec.MinReadySeconds, now) {
			st.AvailableReplicas++
		}
	}
	return st
}

// TestPodListRuleNeverAheadOfTheCounters enumerates every Deployment state
// of up to three pods (six pod states: old, terminating, new ready for a
// minute or a second, new not ready, new terminating), 1 or 2 replicas,
// minReadySeconds 0 or 5, the old ReplicaSet scaled to 0 or 1 and the new
// one to 0–3, with the Deployment's status lagging (its counters say "old
// replicas pending"). Whenever Assess says Rolled there, the pod list
// holds no old or terminating pod, every ReplicaSet has as many pods as
// its spec asks (so the ReplicaSet controller creates and deletes nothing
// more), and the full rule (the counters the controllers publish for
// exactly these objects, then the pod list) says Rolled too: the pod-list
// rule is never earlier than a full rule that could be wrong.
func TestPodListRuleNeverAheadOfTheCounters(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	rolled, states := 0, 0
	for _, want := range []int32{1, 2} {
		for _, minReady := range []int32{0, 5} {
			for _, oldScale := range []int32{0, 1} {
				for newScale := int32(0); newScale <= 3; newScale++ {
					for _, set := range multisets(len(podKinds), 3) {
						f := newFixture(want)
						f.pods = nil
						f.d.Spec.MinReadySeconds = minReady
						f.rss[0].Spec.Replicas, f.rss[1].Spec.Replicas = ptr.To(oldScale), ptr.To(newScale)
						f.d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: want + 1, UpdatedReplicas: want, AvailableReplicas: want}
						var names []string
						for i, k := range set {
							kind := podKinds[k]
							p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "job-system", Name: fmt.Sprintf("p%d-%s", i, kind.name),
								Labels:          map[string]string{"app": "job-worker", appsv1.DefaultDeploymentUniqueLabelKey: kind.hash},
								OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "job-worker-" + kind.hash, UID: types.UID("job-worker-" + kind.hash), Controller: ptr.To(true)}}}}
							if kind.terminating {
								p.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(-time.Second)))
							}
							st := corev1.ConditionFalse
							if kind.ready {
								st = corev1.ConditionTrue
							}
							p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(now.Add(-kind.readyFor))}}
							f.pods = append(f.pods, p)
							names = append(names, kind.name)
						}
						states++
						state := fmt.Sprintf("replicas %d, minReadySeconds %d, old RS %d, new RS %d, pods %v", want, minReady, oldScale, newScale, names)
						v := Assess(f.d, f.rss, f.pods, Options{Now: now})
						if v.State != Rolled {
							continue
						}
						rolled++
						// Nothing left for the ReplicaSet controller to do: each
						// ReplicaSet has as many active pods as its spec asks.
						require.Equal(t, int32(0), oldScale, state)
						require.Equal(t, int(newScale), len(f.pods), state)
						for _, p := range f.pods {
							require.Equal(t, "new", p.Labels[appsv1.DefaultDeploymentUniqueLabelKey], state)
							require.Nil(t, p.DeletionTimestamp, state)
						}
						full := f.d.DeepCopy()
						full.Status = convergedStatus(f.d, f.pods, "new", now)
						_, done := counters(full) // the full rule, without the pod-list rule
						require.True(t, done, "%s: the counters the controllers publish are not done (status %+v)", state, full.Status)
						require.Equal(t, Rolled, podsGone(full, f.pods, "new", now).State, state)
						behind := f.d.DeepCopy()
						behind.Generation = 3
						require.NotEqual(t, Rolled, Assess(behind, f.rss, f.pods, Options{Now: now}).State, "%s: generation not observed", state)
					}
				}
			}
		}
	}
	t.Logf("%d states, %d Rolled by the pod list while the counters lag", states, rolled)
	require.Positive(t, rolled, "the pod-list rule never applied")
}

// TestRolledOnlyWhenThePodListIsRolled enumerates the states of
// TestPodListRuleNeverAheadOfTheCounters with two statuses: counters that
// lag (old replicas pending) and counters that say done but describe pods
// the list may no longer hold (a pod deleted and replaced since the
// controller's last status write: simulate --seed 121). Whenever Assess
// says Rolled, the pod list itself is rolled out as the judge's ground
// truth has it: every pod of the new template, none terminating, and at
// least spec.replicas available at now.
func TestRolledOnlyWhenThePodListIsRolled(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	rolled, states := 0, 0
	for _, want := range []int32{1, 2} {
		for _, minReady := range []int32{0, 5} {
			for _, stale := range []bool{false, true} {
				for _, set := range multisets(len(podKinds), 3) {
					f := newFixture(want)
					f.pods = nil
					f.d.Spec.MinReadySeconds = minReady
					f.rss[0].Spec.Replicas, f.rss[1].Spec.Replicas = ptr.To[int32](0), ptr.To(want)
					f.d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: want + 1, UpdatedReplicas: want, AvailableReplicas: want}
					if stale {
						f.d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: want, UpdatedReplicas: want, AvailableReplicas: want, TerminatingReplicas: ptr.To[int32](0)}
					}
					var names []string
					for i, k := range set {
						kind := podKinds[k]
						p := f.addPod(kind.hash, kind.ready)
						p.Name = fmt.Sprintf("p%d-%s", i, kind.name)
						p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-kind.readyFor))
						if kind.terminating {
							p.DeletionTimestamp = ptr.To(metav1.NewTime(now.Add(-time.Second)))
						}
						names = append(names, kind.name)
					}
					states++
					state := fmt.Sprintf("replicas %d, minReadySeconds %d, stale counters %v, pods %v", want, minReady, stale, names)
					if Assess(f.d, f.rss, f.pods, Options{Now: now}).State != Rolled {
						continue
					}
					rolled++
					available := int32(0)
					for i := range f.pods {
						p := &f.pods[i]
						require.Equal(t, "new", p.Labels[appsv1.DefaultDeploymentUniqueLabelKey], state)
						require.Nil(t, p.DeletionTimestamp, state)
						if podAvailable(p, minReady, now) {
							available++
						}
					}
					require.GreaterOrEqual(t, available, want, "%s: Rolled with %d of %d pods available", state, available, want)
				}
			}
		}
	}
	t.Logf("%d states, %d Rolled", states, rolled)
	require.Positive(t, rolled, "no state was Rolled")
}

// TestStaleCountersDoNotVouchForAReplacement is simulate --seed 121: the
// Deployment's status (lagging 1 s) still counts the pod node-lost
// deleted as available, and the list holds only its replacement, not yet
// Ready (or Ready for less than minReadySeconds).
func TestStaleCountersDoNotVouchForAReplacement(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	f := newFixture(1)
	f.pods = nil
	f.addPod("new", false).Name = "job-worker-new-replacement"
	v := Assess(f.d, f.rss, f.pods, Options{Now: now})
	require.Equal(t, Progressing, v.State, v.String())
	require.Equal(t, ReasonReplicasNotAvailable, v.Reason)
	require.Equal(t, "pod list shows 0 of 1 new pods available; pod job-worker-new-replacement is not Ready", v.Message)

	f.d.Spec.MinReadySeconds = 30
	f.pods[0].Status.Conditions = readyCondition(true)
	f.pods[0].Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-time.Second))
	v = Assess(f.d, f.rss, f.pods, Options{Now: now})
	require.Equal(t, ReasonReplicasNotAvailable, v.Reason, v.String())
	require.Contains(t, v.Message, "not available (Ready for at least minReadySeconds, 30s)")
	require.Equal(t, Rolled, Assess(f.d, f.rss, f.pods, Options{Now: now.Add(29 * time.Second)}).State)
	require.Equal(t, Rolled, Assess(f.d, f.rss, f.pods, Options{}).State, "without a clock the counters vouch for minReadySeconds")
}
