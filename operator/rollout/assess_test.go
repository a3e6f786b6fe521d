package rollout

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// fixture is a worker Deployment mid-rollout from image v1 (template hash
// "old") to v2 (template hash "new").
type fixture struct {
	d    *appsv1.Deployment
	rss  []appsv1.ReplicaSet
	pods []corev1.Pod
}

func template(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "job-worker"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: image}}},
	}
}

func newFixture(replicas int32) *fixture {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "job-system", Name: "job-worker", UID: "d-uid", Generation: 2},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Template: template("job-worker:v2")},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: replicas,
			ReadyReplicas: replicas, AvailableReplicas: replicas},
	}
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rs := func(name, hash, image string, created metav1.Time) appsv1.ReplicaSet {
		tpl := template(image)
		tpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
		return appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "job-system", Name: name, UID: types.UID(name),
			CreationTimestamp: created, Labels: map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: "job-worker", UID: "d-uid", Controller: ptr.To(true)}}},
			Spec: appsv1.ReplicaSetSpec{Template: tpl}}
	}
	f := &fixture{d: d, rss: []appsv1.ReplicaSet{
		rs("job-worker-old", "old", "job-worker:v1", t0),
		rs("job-worker-new", "new", "job-worker:v2", metav1.NewTime(t0.Add(time.Minute))),
	}}
	for i := int32(0); i < replicas; i++ {
		f.addPod("new", true)
	}
	return f
}

func (f *fixture) addPod(hash string, ready bool) *corev1.Pod {
	name := "job-worker-" + hash + "-" + string(rune('a'+len(f.pods)))
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "job-system", Name: name,
		Labels:          map[string]string{"app": "job-worker", appsv1.DefaultDeploymentUniqueLabelKey: hash},
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "job-worker-" + hash, UID: types.UID("job-worker-" + hash), Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: readyCondition(ready), ContainerStatuses: []corev1.ContainerStatus{{Name: "worker", Ready: ready,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
	f.pods = append(f.pods, p)
	return &f.pods[len(f.pods)-1]
}

// readyCondition is the kubelet's Ready condition of a pod whose
// containers are (or are not) all ready, since 2026-01-01 00:00 UTC.
func readyCondition(ready bool) []corev1.PodCondition {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return []corev1.PodCondition{{Type: corev1.PodReady, Status: st,
		LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}}
}

func (f *fixture) waiting(i int, reason string, restarts int32) {
	f.pods[i].Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "detail"}}
	f.pods[i].Status.ContainerStatuses[0].RestartCount = restarts
}

func (f *fixture) condition(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason string) {
	f.d.Status.Conditions = append(f.d.Status.Conditions, appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: "msg"})
}

func (f *fixture) conditionMsg(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string) {
	f.d.Status.Conditions = append(f.d.Status.Conditions, appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: msg})
}

// rsFailure gives ReplicaSet i a ReplicaFailure=True condition, as the
// ReplicaSet controller sets it when pod creation is refused.
func (f *fixture) rsFailure(i int) {
	f.rss[i].Status.Conditions = append(f.rss[i].Status.Conditions, appsv1.ReplicaSetCondition{
		Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "exceeded quota"})
}

func TestAssess(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC))
	cases := []struct {
		name   string
		mutate func(f *fixture)
		state  State
		reason string
	}{
		{"complete with every old pod gone", func(f *fixture) {}, Rolled, ReasonRolled},
		{"C01 old pod terminating for its grace period while every counter says complete", func(f *fixture) {
			p := f.addPod("old", true)
			p.DeletionTimestamp = &now
		}, Progressing, ReasonOldPodsExist},
		{"C01 terminatingReplicas populated", func(f *fixture) {
			f.d.Status.TerminatingReplicas = ptr.To[int32](1)
		}, Progressing, ReasonTerminatingReplicas},
		{"C02 surge window: replicas = desired+1", func(f *fixture) {
			f.d.Status.Replicas, f.d.Status.UpdatedReplicas, f.d.Status.AvailableReplicas = 4, 1, 3
		}, Progressing, ReasonReplicasNotUpdated},
		{"C02 last old replica pending termination", func(f *fixture) {
			f.d.Status.Replicas = 4
		}, Progressing, ReasonOldReplicasPending},
		{"C03 generation not yet observed, stale status says complete", func(f *fixture) {
			f.d.Generation = 3
		}, Progressing, ReasonGenerationNotObserved},
		{"C03 stale ProgressDeadlineExceeded from an earlier rollout is ignored until observed", func(f *fixture) {
			f.d.Generation = 3
			f.condition(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceed)
		}, Progressing, ReasonGenerationNotObserved},
		{"C04 updated=1 available=3 replicas=3", func(f *fixture) {
			f.d.Status.UpdatedReplicas = 1
		}, Progressing, ReasonReplicasNotUpdated},
		{"updated not yet available", func(f *fixture) {
			f.d.Status.AvailableReplicas = 2
		}, Progressing, ReasonReplicasNotAvailable},
		{"C05 Recreate: old pods still running before new ones exist", func(f *fixture) {
			f.pods = nil
			f.addPod("old", true)
			f.d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1}
		}, Progressing, ReasonReplicasNotUpdated},
		{"C05 Recreate: old pod terminating, no counters", func(f *fixture) {
			f.pods = nil
			p := f.addPod("old", false)
			p.DeletionTimestamp = &now
			f.d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2}
		}, Progressing, ReasonReplicasNotUpdated},
		{"C06 ErrImagePull on a new pod fails fast", func(f *fixture) {
			f.waiting(0, "ErrImagePull", 0)
			f.d.Status.AvailableReplicas = 2
		}, Failed, ReasonPodFailing},
		{"C06 ImagePullBackOff", func(f *fixture) { f.waiting(1, "ImagePullBackOff", 0) }, Failed, ReasonPodFailing},
		{"InvalidImageName", func(f *fixture) { f.waiting(2, "InvalidImageName", 0) }, Failed, ReasonPodFailing},
		{"CreateContainerConfigError", func(f *fixture) { f.waiting(0, "CreateContainerConfigError", 0) }, Failed, ReasonPodFailing},
		{"ErrImagePull on an old pod is not ours to judge", func(f *fixture) {
			f.addPod("old", false)
			f.waiting(len(f.pods)-1, "ErrImagePull", 0)
		}, Progressing, ReasonOldPodsExist},
		{"ErrImagePull on a terminating new pod is ignored", func(f *fixture) {
			f.addPod("new", false)
			f.waiting(len(f.pods)-1, "ErrImagePull", 0)
			f.pods[len(f.pods)-1].DeletionTimestamp = &now
		}, Progressing, ReasonPodsTerminating},
		{"CrashLoopBackOff below the restart bound keeps waiting", func(f *fixture) {
			f.waiting(0, "CrashLoopBackOff", 2)
			f.d.Status.AvailableReplicas = 2
		}, Progressing, ReasonReplicasNotAvailable},
		{"CrashLoopBackOff at the restart bound fails", func(f *fixture) { f.waiting(0, "CrashLoopBackOff", 3) }, Failed, ReasonPodFailing},
		{"C06/C07 progress deadline exceeded", func(f *fixture) {
			f.condition(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceed)
		}, Failed, ReasonProgressDeadlineExceed},
		{"ReplicaFailure", func(f *fixture) {
			f.condition(appsv1.DeploymentReplicaFailure, corev1.ConditionTrue, "FailedCreate")
		}, Failed, ReasonReplicaFailure},
		{"progress deadline naming the new ReplicaSet fails", func(f *fixture) {
			f.conditionMsg(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceed, `ReplicaSet "job-worker-new" has timed out progressing.`)
			f.d.Status.AvailableReplicas = 2
		}, Failed, ReasonProgressDeadlineExceed},
		{"stale window: spec back to an existing ReplicaSet, deadline still names the previous one", func(f *fixture) {
			// progress.go syncRolloutStatus: no progress counted, DeploymentTimedOut
			// keeps the old condition at the new observedGeneration.
			f.conditionMsg(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceed, `ReplicaSet "job-worker-bad" has timed out progressing.`)
			f.d.Status.Replicas = 4
			f.addPod("old", false)
			f.waiting(len(f.pods)-1, "ErrImagePull", 0) // the bad template's pod, being scaled away
		}, Progressing, ReasonOldReplicasPending},
		{"stale window: deadline message of a Deployment without new ReplicaSet while one exists now", func(f *fixture) {
			f.conditionMsg(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadlineExceed, `Deployment "job-worker" has timed out progressing.`)
		}, Rolled, ReasonRolled},
		{"ReplicaFailure carried by the new ReplicaSet fails", func(f *fixture) {
			f.condition(appsv1.DeploymentReplicaFailure, corev1.ConditionTrue, "FailedCreate")
			f.rsFailure(1)
		}, Failed, ReasonReplicaFailure},
		{"ReplicaFailure lifted from an old ReplicaSet is not about the new template", func(f *fixture) {
			f.condition(appsv1.DeploymentReplicaFailure, corev1.ConditionTrue, "FailedCreate")
			f.rsFailure(0)
		}, Rolled, ReasonRolled},
		{"C07 scaled from 0 with a bad image: no deadline condition, pods say why", func(f *fixture) {
			f.d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3}
			for i := range f.pods {
				f.waiting(i, "ImagePullBackOff", 0)
			}
		}, Failed, ReasonPodFailing},
		{"paused", func(f *fixture) { f.d.Spec.Paused = true }, Progressing, ReasonDeploymentPaused},
		{"being deleted", func(f *fixture) { f.d.DeletionTimestamp = &now }, Failed, ReasonDeploymentBeingDeleted},
		{"no ReplicaSet matches the template yet", func(f *fixture) {
			f.d.Spec.Template = template("job-worker:v3")
		}, Progressing, ReasonNewReplicaSetNotFound},
		{"pod cache behind: fewer new pods listed than desired", func(f *fixture) {
			f.pods = f.pods[:2]
		}, Progressing, ReasonNewPodsNotCreated},
		{"pods of another Deployment's ReplicaSet are ignored", func(f *fixture) {
			p := f.addPod("old", true)
			p.OwnerReferences[0].UID = "someone-else"
		}, Rolled, ReasonRolled},
		{"ReplicaSets of another Deployment are ignored", func(f *fixture) {
			f.rss[1].OwnerReferences[0].UID = "someone-else"
		}, Progressing, ReasonNewReplicaSetNotFound},
		{"scale to zero with no pods is rolled", func(f *fixture) {
			f.d.Spec.Replicas = ptr.To[int32](0)
			f.d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2}
			f.pods = nil
		}, Rolled, ReasonRolled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(3)
			tc.mutate(f)
			v := Assess(f.d, f.rss, f.pods, Options{})
			assert.Equal(t, tc.state, v.State, v.String())
			assert.Equal(t, tc.reason, v.Reason, v.String())
			assert.NotEmpty(t, v.Message)
		})
	}
}

func TestAssessMessagesNameTheCause(t *testing.T) {
	f := newFixture(3)
	f.waiting(1, "ErrImagePull", 0)
	v := Assess(f.d, f.rss, f.pods, Options{})
	assert.Equal(t, `pod job-worker-new-b container "worker": ErrImagePull: detail`, v.Message)

	f = newFixture(1)
	p := f.addPod("old", true)
	p.DeletionTimestamp = &metav1.Time{}
	v = Assess(f.d, f.rss, f.pods, Options{})
	assert.Equal(t, "old pod job-worker-old-b (template old) still exists (terminating)", v.Message)
}

func TestAssessDoesNotMutate(t *testing.T) {
	f := newFixture(3)
	before := f.d.DeepCopy()
	rsBefore := f.rss[1].DeepCopy()
	Assess(f.d, f.rss, f.pods, Options{})
	assert.Equal(t, before, f.d)
	assert.Equal(t, rsBefore, &f.rss[1])
}

func TestAssessCustomRestartBound(t *testing.T) {
	f := newFixture(3)
	f.waiting(0, "CrashLoopBackOff", 1)
	assert.Equal(t, Failed, Assess(f.d, f.rss, f.pods, Options{MaxRestarts: 1}).State)
	assert.NotEqual(t, Failed, Assess(f.d, f.rss, f.pods, Options{MaxRestarts: 5}).State)
}

func TestEqualIgnoreHash(t *testing.T) {
	tmpl := func(labels map[string]string, image string) *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}
	}
	hash := appsv1.DefaultDeploymentUniqueLabelKey
	cases := []struct {
		name string
		a, b *corev1.PodTemplateSpec
		want bool
	}{
		{"same", tmpl(map[string]string{"app": "x"}, "i:1"), tmpl(map[string]string{"app": "x"}, "i:1"), true},
		{"hash ignored", tmpl(map[string]string{"app": "x", hash: "abc"}, "i:1"), tmpl(map[string]string{"app": "x"}, "i:1"), true},
		{"only the hash vs nil", tmpl(map[string]string{hash: "abc"}, "i:1"), tmpl(nil, "i:1"), true},
		{"empty vs nil", tmpl(map[string]string{}, "i:1"), tmpl(nil, "i:1"), true},
		{"label value differs", tmpl(map[string]string{"app": "x"}, "i:1"), tmpl(map[string]string{"app": "y"}, "i:1"), false},
		{"extra label", tmpl(map[string]string{"app": "x"}, "i:1"), tmpl(map[string]string{"app": "x", "tier": "a"}, "i:1"), false},
		{"extra label on the left", tmpl(map[string]string{"app": "x", "tier": "a", hash: "h"}, "i:1"), tmpl(map[string]string{"app": "x", hash: "h"}, "i:1"), false},
		{"image differs", tmpl(map[string]string{"app": "x"}, "i:1"), tmpl(map[string]string{"app": "x"}, "i:2"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a0, b0 := tc.a.DeepCopy(), tc.b.DeepCopy()
			if got := equalIgnoreHash(tc.a, tc.b); got != tc.want {
				t.Fatalf("equalIgnoreHash = %v, want %v", got, tc.want)
			}
			if got := equalIgnoreHash(tc.b, tc.a); got != tc.want {
				t.Fatalf("equalIgnoreHash (swapped) = %v, want %v", got, tc.want)
			}
			if !apiequality.Semantic.DeepEqual(a0, tc.a) || !apiequality.Semantic.DeepEqual(b0, tc.b) {
				t.Fatal("equalIgnoreHash changed its arguments")
			}
		})
	}
}

// TestTemplateMatchFollowsGenerations: with a TemplateMatch, Assess finds
// the same new ReplicaSet as without one; a template change that comes
// with a generation bump (as kube-apiserver bumps it) is seen; objects
// with generation 0 (a fake client's) are compared every time, so a
// template changed without a bump is seen too. A remembered answer is
// reused only for the same UIDs and generations.
func TestTemplateMatchFollowsGenerations(t *testing.T) {
	f := newFixture(3)
	for i := range f.rss {
		f.rss[i].Generation = 1
	}
	var m TemplateMatch
	opts := Options{Templates: &m}
	assert.Equal(t, Assess(f.d, f.rss, f.pods, Options{}), Assess(f.d, f.rss, f.pods, opts))
	assert.Equal(t, "job-worker-new", findNewReplicaSet(f.d, f.rss, &m).Name)
	assert.Len(t, m.known, 2, "one answer per (Deployment, ReplicaSet) pair")

	// The Deployment goes back to v1 with its generation bumped: the old
	// ReplicaSet is the new one again.
	f.d.Spec.Template = template("job-worker:v1")
	f.d.Generation = 3
	assert.Equal(t, "job-worker-old", findNewReplicaSet(f.d, f.rss, &m).Name)

	// The same pairs (UIDs and generations) answer from memory: a template
	// changed in place without a bump, which kube-apiserver never serves,
	// is not looked at again.
	f.d.Spec.Template = template("job-worker:v2")
	assert.Equal(t, "job-worker-old", findNewReplicaSet(f.d, f.rss, &m).Name)

	// Generation 0 (a fake client's objects): compared every time.
	f.d.Generation = 0
	assert.Equal(t, "job-worker-new", findNewReplicaSet(f.d, f.rss, &m).Name)
	f.d.Spec.Template = template("job-worker:v1")
	assert.Equal(t, "job-worker-old", findNewReplicaSet(f.d, f.rss, &m).Name)
}

// TestTemplateMatchIsBounded: past MaxTemplateMatches answers it starts over.
func TestTemplateMatchIsBounded(t *testing.T) {
	f := newFixture(1)
	var m TemplateMatch
	for g := int64(1); g <= MaxTemplateMatches+10; g++ {
		f.d.Generation = g
		f.rss[1].Generation = 1
		findNewReplicaSet(f.d, f.rss[1:], &m)
	}
	assert.LessOrEqual(t, len(m.known), MaxTemplateMatches)
	assert.Equal(t, 10, len(m.known))
}
