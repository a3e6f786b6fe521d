package controller

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// kubeletOnly applies, with rng, the changes a kubelet or scheduler makes
// that PodChanged drops: conditions other than Ready, the Ready
// condition's probe time, phase, addresses, start times, and a container's
// readiness, start and running/terminated state. It never touches a
// waiting container.
func kubeletOnly(rng *rand.Rand, p *corev1.Pod) {
	t := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, rng.Intn(60), 0, time.UTC))
	st := corev1.ConditionStatus([]string{"True", "False", "Unknown"}[rng.Intn(3)])
	conds := []corev1.PodCondition{{Type: corev1.PodScheduled, Status: st, LastTransitionTime: t},
		{Type: corev1.ContainersReady, Status: st, LastTransitionTime: t}}[:rng.Intn(3)]
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			c.LastProbeTime = t
			conds = append(conds, c)
		}
	}
	p.Status.Conditions = conds
	p.Status.Phase = []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed}[rng.Intn(4)]
	p.Status.PodIP = fmt.Sprintf("10.0.0.%d", rng.Intn(250))
	p.Status.StartTime = &t
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		if cs.State.Waiting != nil {
			continue
		}
		cs.Ready, cs.Started = rng.Intn(2) == 0, ptr.To(rng.Intn(2) == 0)
		if rng.Intn(2) == 0 {
			cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}}
		} else {
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(rng.Intn(3)), FinishedAt: t}}
		}
	}
}

// TestPodPredicateDropsOnlyWhatAssessIgnores: over seeded random pod lists
// of a Deployment mid-rollout (old and new template hashes, terminating
// pods, waiting containers), every change PodChanged drops leaves
// rollout.Assess's verdict as it was, and every change it keeps (a
// projection field) is reported.
func TestPodPredicateDropsOnlyWhatAssessIgnores(t *testing.T) {
	const seed, runs = 20261202, 2000
	rng := rand.New(rand.NewSource(seed))
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "d", Generation: 2},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "w"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "w", Image: "w:v2"}}}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2},
	}
	rs := func(hash, image string, minute int, replicas int32) appsv1.ReplicaSet {
		tpl := *d.Spec.Template.DeepCopy()
		tpl.Spec.Containers[0].Image = image
		tpl.Labels = map[string]string{"app": "w", appsv1.DefaultDeploymentUniqueLabelKey: hash}
		return appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w-" + hash, UID: types.UID("w-" + hash), Labels: tpl.Labels,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, minute, 0, 0, time.UTC)),
			OwnerReferences:   []metav1.OwnerReference{{Kind: "Deployment", Name: "w", UID: "d", Controller: ptr.To(true)}}},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Template: tpl}}
	}
	rss := []appsv1.ReplicaSet{rs("old", "w:v1", 0, 0), rs("new", "w:v2", 1, 2)}
	rolled := 0
	for run := 0; run < runs; run++ {
		var pods []corev1.Pod
		for i, n := 0, 1+rng.Intn(3); i < n; i++ {
			hash := []string{"old", "new", "new"}[rng.Intn(3)]
			p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("w-%s-%d", hash, i),
				Labels:          map[string]string{"app": "w", appsv1.DefaultDeploymentUniqueLabelKey: hash},
				OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "w-" + hash, UID: types.UID("w-" + hash), Controller: ptr.To(true)}}},
				Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "w"}}}}
			if rng.Intn(4) == 0 {
				p.DeletionTimestamp = ptr.To(metav1.NewTime(time.Date(2026, 1, 1, 0, 2, 0, 0, time.UTC)))
			}
			if rng.Intn(4) == 0 {
				p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{
					Reason: []string{"ErrImagePull", "CrashLoopBackOff", "ContainerCreating"}[rng.Intn(3)]}
				p.Status.ContainerStatuses[0].RestartCount = int32(rng.Intn(8))
			}
			if rng.Intn(2) == 0 {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
					LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, rng.Intn(60), 0, time.UTC))}}
			}
			kubeletOnly(rng, &p)
			pods = append(pods, p)
		}
		if rng.Intn(2) == 0 { // the counters lag: the pod-list rule decides
			d.Status.Replicas = 3
		} else {
			d.Status.Replicas = 2
		}
		opts := rollout.Options{Now: time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)}
		before := rollout.Assess(d, rss, pods, opts)
		i := rng.Intn(len(pods))
		old := pods[i].DeepCopy()
		kubeletOnly(rng, &pods[i])
		require.False(t, PodChanged(old, &pods[i]), "seed %d run %d: a kubelet-only change passed the predicate", seed, run)
		if before.State == rollout.Rolled && d.Status.Replicas == 3 {
			rolled++
		}
		require.Equal(t, before, rollout.Assess(d, rss, pods, opts),
			"seed %d run %d: a change the predicate drops changed the verdict (replay: go test ./operator/controller -run %s)", seed, run, t.Name())
	}

	require.Positive(t, rolled, "seed %d: the pod-list rule never decided", seed)

	base := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"h": "1"}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "w"}}}}
	kept := map[string]func(*corev1.Pod){
		"label":      func(p *corev1.Pod) { p.Labels["h"] = "2" },
		"annotation": func(p *corev1.Pod) { p.Annotations = map[string]string{"a": "b"} },
		"owner":      func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "x"}} },
		"deletion":   func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.Now()) },
		"node":       func(p *corev1.Pod) { p.Spec.NodeName = "n1" },
		"restarts":   func(p *corev1.Pod) { p.Status.ContainerStatuses[0].RestartCount = 1 },
		"waiting": func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}
		},
		"init container": func(p *corev1.Pod) { p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init"}} },
		"container added": func(p *corev1.Pod) {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "s"})
		},
	}
	for name, change := range kept {
		n := base.DeepCopy()
		change(n)
		assert.True(t, PodChanged(&base, n), "a %s change must wake the reconciler", name)
	}
}

func TestReplicaSetPredicate(t *testing.T) {
	o := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "w-new", Generation: 1}}
	counters := o.DeepCopy()
	counters.Status = appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 1}
	assert.False(t, ReplicaSetChanged(o, counters), "counters only: the Deployment's status carries them")
	scaled := o.DeepCopy()
	scaled.Generation = 2
	assert.True(t, ReplicaSetChanged(o, scaled))
	failing := o.DeepCopy()
	failing.Status.Conditions = []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate"}}
	assert.True(t, ReplicaSetChanged(o, failing), "ReplicaFailure is read by the failure classification")
}

func TestUpgradePredicate(t *testing.T) {
	o := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Name: "u", Generation: 1},
		Status: v1beta1.ApplicationUpgradeStatus{Phase: v1beta1.PhaseProgressing, ObservedGeneration: 1,
			Components: []v1beta1.ComponentStatus{{Name: "worker", Phase: v1beta1.ComponentRollingOut, WrittenGeneration: 2, Message: "1 of 3"}}}}
	msg := o.DeepCopy()
	msg.Status.Message = "other"
	msg.Status.Components[0].Message = "2 of 3"
	msg.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse}}
	assert.False(t, UpgradeChanged(o, msg), "a message-only status write is the reconciler's own echo")
	for name, change := range map[string]func(*v1beta1.ApplicationUpgrade){
		"generation":      func(u *v1beta1.ApplicationUpgrade) { u.Generation = 2 },
		"phase":           func(u *v1beta1.ApplicationUpgrade) { u.Status.Phase = v1beta1.PhaseCompleted },
		"observed":        func(u *v1beta1.ApplicationUpgrade) { u.Status.ObservedGeneration = 2 },
		"component phase": func(u *v1beta1.ApplicationUpgrade) { u.Status.Components[0].Phase = v1beta1.ComponentRolled },
		"written":         func(u *v1beta1.ApplicationUpgrade) { u.Status.Components[0].WrittenGeneration = 3 },
		"refused":         func(u *v1beta1.ApplicationUpgrade) { u.Status.Components[0].RefusedWrites = 1 },
		"component added": func(u *v1beta1.ApplicationUpgrade) {
			u.Status.Components = append(u.Status.Components, v1beta1.ComponentStatus{Name: "api"})
		},
		"deletion (no gen)": func(u *v1beta1.ApplicationUpgrade) { u.DeletionTimestamp = ptr.To(metav1.Now()) },
	} {
		n := o.DeepCopy()
		change(n)
		assert.True(t, UpgradeChanged(o, n), "a %s change must wake the reconciler", name)
	}
	ws := Mapper{}.Watches()
	assert.True(t, ws[0].Predicate.Create(event.CreateEvent{Object: o}), "creates always pass")
	assert.True(t, ws[0].Predicate.Delete(event.DeleteEvent{Object: o}), "deletes always pass")
	assert.False(t, ws[0].Predicate.Update(event.UpdateEvent{ObjectOld: o, ObjectNew: msg}))
	assert.True(t, passes(ws[1], o, msg), "the holder's status writes still wake the upgrades it holds")
}

// TestUpgradeMetadataEditsWakeNothing: a tenant allowed to update
// ApplicationUpgrades but not to patch any workload annotated an upgrade of
// 32 components in a loop, and every annotation cost the operator a
// reconcile of ~33 API requests (the impersonated reads are uncached),
// also waking every other upgrade of the same workloads (tenant trial,
// 2026-12-03). No reconcile reads an upgrade's labels, annotations or owner
// references: neither watch of ApplicationUpgrades passes an update that
// changes only those; generation, deletion and status still pass.
func TestUpgradeMetadataEditsWakeNothing(t *testing.T) {
	o := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Name: "u", Namespace: "tenant-a", Generation: 1, ResourceVersion: "7"},
		Status: v1beta1.ApplicationUpgradeStatus{Phase: v1beta1.PhaseProgressing, ObservedGeneration: 1,
			Components: []v1beta1.ComponentStatus{{Name: "worker", Phase: v1beta1.ComponentRollingOut, WrittenGeneration: 2}}}}
	ws := Mapper{}.Watches()
	wake := func(w int, n *v1beta1.ApplicationUpgrade) bool { return passes(ws[w], o, n) }
	for name, change := range map[string]func(*v1beta1.ApplicationUpgrade){
		"annotation": func(u *v1beta1.ApplicationUpgrade) { u.Annotations = map[string]string{"poke": "1"} },
		"label":      func(u *v1beta1.ApplicationUpgrade) { u.Labels = map[string]string{"team": "a"} },
		"owner reference": func(u *v1beta1.ApplicationUpgrade) {
			u.OwnerReferences = []metav1.OwnerReference{{Kind: "ConfigMap", Name: "x"}}
		},
		"managed fields": func(u *v1beta1.ApplicationUpgrade) {
			u.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
		},
		"conversion-data": func(u *v1beta1.ApplicationUpgrade) {
			u.Annotations = map[string]string{"upgrades.lunadas.dev/conversion-data": "{}"}
		},
		"resourceVersion":    func(u *v1beta1.ApplicationUpgrade) { u.ResourceVersion = "8" },
		"resync (no change)": func(*v1beta1.ApplicationUpgrade) {},
	} {
		n := o.DeepCopy()
		change(n)
		n.ResourceVersion = "9"
		assert.False(t, wake(0, n), "a %s edit must not reconcile the upgrade", name)
		assert.False(t, wake(1, n), "a %s edit must not reconcile the other upgrades of its workloads", name)
	}
	for name, change := range map[string]func(*v1beta1.ApplicationUpgrade){
		"generation":     func(u *v1beta1.ApplicationUpgrade) { u.Generation = 2 },
		"deletion":       func(u *v1beta1.ApplicationUpgrade) { u.DeletionTimestamp = ptr.To(metav1.Now()) },
		"phase":          func(u *v1beta1.ApplicationUpgrade) { u.Status.Phase = v1beta1.PhaseCompleted },
		"status message": func(u *v1beta1.ApplicationUpgrade) { u.Status.Message = "other" },
	} {
		n := o.DeepCopy()
		change(n)
		assert.True(t, wake(1, n), "a %s change must wake the other upgrades of its workloads", name)
	}
}

// passes reports whether watch w passes the update from o to n (a watch
// without a predicate passes every event).
func passes(w Watch, o, n client.Object) bool {
	return w.Predicate == nil || w.Predicate.Update(event.UpdateEvent{ObjectOld: o, ObjectNew: n})
}
