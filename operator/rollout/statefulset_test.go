package rollout

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// stsFixture is StatefulSet shop/db, 3 replicas, rolled out from revision
// db-old to db-new: every counter at target and pods db-0..db-2 at db-new.
type stsFixture struct {
	sts  *appsv1.StatefulSet
	pods []corev1.Pod
}

func newSTS() *stsFixture {
	f := &stsFixture{sts: &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db", UID: "sts-uid", Generation: 2},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(3)),
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(int32(0))}}},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
			CurrentReplicas: 3, UpdatedReplicas: 3, CurrentRevision: "db-new", UpdateRevision: "db-new"},
	}}
	for i := 0; i < 3; i++ {
		f.pods = append(f.pods, statefulPod(i, "db-new"))
	}
	return f
}

func statefulPod(ord int, rev string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db-" + strconv.Itoa(ord),
		Labels:          map[string]string{"app": "db", appsv1.StatefulSetRevisionLabel: rev},
		OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "db", UID: "sts-uid", Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: readyCondition(true), ContainerStatuses: []corev1.ContainerStatus{{Name: "db", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
}

func terminating(p *corev1.Pod) {
	p.DeletionTimestamp = ptr.To(metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
}

func TestAssessStatefulSet(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*stsFixture)
		state  State
		reason string
		msg    string
	}{
		{"rolled: counters at target, every pod at the update revision", func(*stsFixture) {}, Rolled, ReasonRolled, "all 3 pods run update revision db-new"},
		{"generation not observed", func(f *stsFixture) { f.sts.Generation = 3 }, Progressing, ReasonGenerationNotObserved, "observe generation 3 (observed 2)"},
		{"observedGeneration 0 is never observed (kubectl's rule)", func(f *stsFixture) { f.sts.Generation, f.sts.Status.ObservedGeneration = 0, 0 },
			Progressing, ReasonGenerationNotObserved, "observed 0"},
		{"no update revision yet", func(f *stsFixture) { f.sts.Status.UpdateRevision = "" }, Progressing, ReasonRevisionNotCurrent, "no update revision"},
		{"being deleted", func(f *stsFixture) { f.sts.DeletionTimestamp = ptr.To(metav1.Now()) }, Failed, ReasonWorkloadBeingDeleted, "being deleted"},

		// The controller deletes the highest old ordinal first and creates
		// the new pod-N only once the old one is gone (updateStatefulSet).
		{"mid-rollout: db-2 updated, db-1 terminating, db-0 old", func(f *stsFixture) {
			f.pods[0].Labels[appsv1.StatefulSetRevisionLabel] = "db-old"
			f.pods[1].Labels[appsv1.StatefulSetRevisionLabel] = "db-old"
			terminating(&f.pods[1])
			f.sts.Status.UpdatedReplicas, f.sts.Status.CurrentReplicas, f.sts.Status.CurrentRevision = 1, 1, "db-old"
		}, Progressing, ReasonReplicasNotUpdated, "1 of 3 pods at update revision db-new"},
		{"updated but one pod not ready", func(f *stsFixture) { f.sts.Status.ReadyReplicas, f.sts.Status.AvailableReplicas = 2, 2 },
			Progressing, ReasonReplicasNotReady, "2 of 3 pods ready"},
		{"ready but not available (minReadySeconds)", func(f *stsFixture) { f.sts.Status.AvailableReplicas = 2 },
			Progressing, ReasonReplicasNotAvailable, "2 of 3 pods available"},
		{"counters done but stale: db-1 was deleted and recreated, not yet Ready", func(f *stsFixture) {
			f.pods[1].Status.Conditions = readyCondition(false)
		}, Progressing, ReasonReplicasNotAvailable, "pod list shows 2 of 3 pods at update revision db-new available; pod db-1 is not Ready"},
		{"a condemned pod still counted in replicas (scale-down)", func(f *stsFixture) { f.sts.Status.Replicas = 4 },
			Progressing, ReasonOldReplicasPending, "4 pods exist, want 3"},
		{"counters done but currentRevision not yet the update revision", func(f *stsFixture) { f.sts.Status.CurrentRevision = "db-old" },
			Progressing, ReasonRevisionNotCurrent, "current revision db-old is not yet the update revision db-new"},

		// What the counters cannot say.
		{"counters say done but an old pod still terminating", func(f *stsFixture) {
			f.pods[2].Labels[appsv1.StatefulSetRevisionLabel] = "db-old"
			terminating(&f.pods[2])
		}, Progressing, ReasonOldPodsExist, "old pod db-2 (revision db-old) still exists (terminating)"},
		{"counters say done but a pod of the update revision is terminating", func(f *stsFixture) { terminating(&f.pods[0]) },
			Progressing, ReasonPodsTerminating, "pod db-0 is terminating"},
		{"counters say done but the pod list lacks a pod", func(f *stsFixture) { f.pods = f.pods[:2] },
			Progressing, ReasonNewPodsNotCreated, "2 of 3 pods"},
		{"a pod of another StatefulSet is ignored", func(f *stsFixture) {
			p := statefulPod(9, "other")
			p.OwnerReferences[0].UID = "someone-else"
			f.pods = append(f.pods, p)
		}, Rolled, ReasonRolled, ""},

		// Rollouts only a person can finish.
		{"partition keeps db-0 at the old revision", func(f *stsFixture) {
			f.sts.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(int32(1))
			f.pods[0].Labels[appsv1.StatefulSetRevisionLabel] = "db-old"
			f.sts.Status.UpdatedReplicas, f.sts.Status.CurrentRevision = 2, "db-old"
		}, Progressing, ReasonPartitioned, "partition 1: pods with an ordinal below it keep the old revision (db-0), so the rollout is staged, not complete; lower the partition to 0"},
		{"partition > 0 with every pod already updated is rolled", func(f *stsFixture) {
			f.sts.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(int32(2))
		}, Rolled, ReasonRolled, ""},
		{"OnDelete with old pods waits and names them", func(f *stsFixture) {
			f.sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
			f.pods[0].Labels[appsv1.StatefulSetRevisionLabel] = "db-old"
			f.pods[1].Labels[appsv1.StatefulSetRevisionLabel] = "db-old"
			f.sts.Status.UpdatedReplicas = 1
		}, Progressing, ReasonOnDelete, "OnDelete update strategy: its controller replaces a pod only after someone deletes it, and this operator never deletes pods; delete the old pods (db-0, db-1)"},
		{"OnDelete once every pod was replaced is rolled", func(f *stsFixture) {
			f.sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
		}, Rolled, ReasonRolled, ""},

		// Per-pod failure classification, as for Deployments.
		{"new pod in ImagePullBackOff fails", func(f *stsFixture) {
			f.sts.Status.UpdatedReplicas = 1
			f.pods[2].Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}
		}, Failed, ReasonPodFailing, "pod db-2 container \"db\": ImagePullBackOff"},
		{"new pod crash-looping 3 times fails", func(f *stsFixture) {
			f.pods[2].Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
			f.pods[2].Status.ContainerStatuses[0].RestartCount = 3
		}, Failed, ReasonPodFailing, "CrashLoopBackOff after 3 restarts"},
		{"an old pod's pull error is not about the current revision", func(f *stsFixture) {
			f.pods[0].Labels[appsv1.StatefulSetRevisionLabel] = "db-old"
			f.pods[0].Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}
		}, Progressing, ReasonOldPodsExist, "old pod db-0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newSTS()
			tc.mutate(f)
			before := f.sts.DeepCopy()
			v := AssessStatefulSet(f.sts, f.pods, Options{})
			assert.Equal(t, tc.state, v.State, v.String())
			assert.Equal(t, tc.reason, v.Reason, v.String())
			assert.Contains(t, v.Message, tc.msg)
			assert.Equal(t, before, f.sts, "AssessStatefulSet must not mutate its input")
		})
	}
}

func TestStatefulPodOrdinal(t *testing.T) {
	for name, want := range map[string]int{"db-0": 0, "db-12": 12, "my-db-3": 3, "db": -1, "db-x": -1} {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		assert.Equal(t, want, ordinal(&p), name)
	}
}
