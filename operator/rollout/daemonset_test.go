package rollout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// dsFixture is DaemonSet shop/agent on nodes n1..n3, rolled out from
// template v1 (hash "h1", template generation 1) to v2 (hash "h2",
// generation 2), maxSurge 1: every counter at target, one new pod per node.
type dsFixture struct {
	ds   *appsv1.DaemonSet
	revs []appsv1.ControllerRevision
	pods []corev1.Pod
}

func dsTemplate(image string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: image}}}}
}

// revisionOf is the ControllerRevision the DaemonSet controller's snapshot
// (pkg/controller/daemon/update.go) records for ds's template.
func revisionOf(t *testing.T, ds *appsv1.DaemonSet, hash string, revision int64) appsv1.ControllerRevision {
	data, err := daemonSetPatch(ds)
	require.NoError(t, err)
	return appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "agent-" + hash,
		Labels:          map[string]string{"app": "agent", appsv1.DefaultDaemonSetUniqueLabelKey: hash},
		OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", UID: "ds-uid", Controller: ptr.To(true)}}},
		Data: runtime.RawExtension{Raw: data}, Revision: revision}
}

func newDS(t *testing.T) *dsFixture {
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "agent", UID: "ds-uid", Generation: 2,
			Annotations: map[string]string{appsv1.DeprecatedTemplateGeneration: "1"}},
		Spec: appsv1.DaemonSetSpec{Template: dsTemplate("agent:v1"),
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}}},
		Status: appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 3, CurrentNumberScheduled: 3,
			NumberReady: 3, NumberAvailable: 3, UpdatedNumberScheduled: 3},
	}
	old := revisionOf(t, ds, "h1", 1)
	ds.Spec.Template = dsTemplate("agent:v2")
	ds.Annotations[appsv1.DeprecatedTemplateGeneration] = "2"
	f := &dsFixture{ds: ds, revs: []appsv1.ControllerRevision{old, revisionOf(t, ds, "h2", 2)}}
	for _, n := range []string{"n1", "n2", "n3"} {
		f.pods = append(f.pods, daemonPod("agent-new-"+n, n, "h2", "2"))
	}
	return f
}

func daemonPod(name, node, hash, gen string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name,
		Labels:          map[string]string{"app": "agent", appsv1.DefaultDaemonSetUniqueLabelKey: hash, DaemonSetTemplateGenerationLabel: gen},
		OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", UID: "ds-uid", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: readyCondition(true), ContainerStatuses: []corev1.ContainerStatus{{Name: "agent", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
}

func TestAssessDaemonSet(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*dsFixture)
		state  State
		reason string
		msg    string
	}{
		{"rolled: counters at target, one new pod per node", func(*dsFixture) {}, Rolled, ReasonRolled, "all 3 pods run the current revision"},
		{"generation not observed", func(f *dsFixture) { f.ds.Generation = 3 }, Progressing, ReasonGenerationNotObserved, "observe generation 3 (observed 2)"},
		{"being deleted", func(f *dsFixture) { f.ds.DeletionTimestamp = ptr.To(metav1.Now()) }, Failed, ReasonWorkloadBeingDeleted, ""},
		{"no matching revision and no template generation", func(f *dsFixture) {
			f.revs = f.revs[:1]
			delete(f.ds.Annotations, appsv1.DeprecatedTemplateGeneration)
		}, Progressing, ReasonRevisionUnknown, "no ControllerRevision of daemonset shop/agent matches its pod template"},
		{"revision not in the cache yet: the template generation still tells new pods", func(f *dsFixture) { f.revs = f.revs[:1] },
			Rolled, ReasonRolled, ""},
		{"template generation absent: the revision hash tells new pods", func(f *dsFixture) {
			delete(f.ds.Annotations, appsv1.DeprecatedTemplateGeneration)
		}, Rolled, ReasonRolled, ""},

		// kubectl rollout status's two checks, then the others.
		{"2 of 3 nodes updated", func(f *dsFixture) { f.ds.Status.UpdatedNumberScheduled = 2 },
			Progressing, ReasonReplicasNotUpdated, "2 of 3 nodes run the current revision"},
		{"updated but not available", func(f *dsFixture) { f.ds.Status.NumberAvailable = 2 },
			Progressing, ReasonReplicasNotAvailable, "2 of 3 updated pods available"},
		{"counters done but stale: the pod on n2 was deleted and recreated, not yet Ready", func(f *dsFixture) {
			f.pods[len(f.pods)-2].Status.Conditions = readyCondition(false)
		}, Progressing, ReasonReplicasNotAvailable, "pod list shows 2 of 3 new pods available; pod agent-new-n2 is not Ready"},
		{"numberUnavailable > 0", func(f *dsFixture) { f.ds.Status.NumberUnavailable = 1 },
			Progressing, ReasonReplicasNotAvailable, "1 pods unavailable"},
		{"misscheduled pods", func(f *dsFixture) { f.ds.Status.NumberMisscheduled = 1 },
			Progressing, ReasonMisscheduled, "1 pods run on nodes that should not run them"},

		// What the counters cannot say.
		{"counters say done but an old pod still terminating (maxSurge: beside the new one)", func(f *dsFixture) {
			p := daemonPod("agent-old-n2", "n2", "h1", "1")
			terminating(&p)
			f.pods = append(f.pods, p)
		}, Progressing, ReasonOldPodsExist, "old pod agent-old-n2 on node n2 still exists (terminating), beside new pod agent-new-n2 (maxSurge)"},
		{"counters say done but an old pod, terminal and terminating, is left out by the controller", func(f *dsFixture) {
			p := daemonPod("agent-old-n1", "n1", "h1", "1")
			terminating(&p)
			p.Status.Phase = corev1.PodSucceeded
			f.pods = append(f.pods, p)
		}, Progressing, ReasonOldPodsExist, "old pod agent-old-n1 on node n1 still exists (terminating)"},
		{"counters say done but a new pod is terminating", func(f *dsFixture) { terminating(&f.pods[0]) },
			Progressing, ReasonPodsTerminating, "pod agent-new-n1 on node n1 is terminating"},
		{"counters say done but the pod list lacks a node's pod", func(f *dsFixture) { f.pods = f.pods[1:] },
			Progressing, ReasonNewPodsNotCreated, "2 of 3 new pods"},
		{"a pod of another owner is ignored", func(f *dsFixture) {
			p := daemonPod("other", "n1", "h1", "1")
			p.OwnerReferences[0].UID = "someone-else"
			f.pods = append(f.pods, p)
		}, Rolled, ReasonRolled, ""},
		{"no node should run it: rolled with no pods", func(f *dsFixture) {
			f.pods = nil
			f.ds.Status = appsv1.DaemonSetStatus{ObservedGeneration: 2}
		}, Rolled, ReasonRolled, "all 0 pods"},

		{"OnDelete with an old pod waits and names it", func(f *dsFixture) {
			f.ds.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
			f.pods[1] = daemonPod("agent-old-n2", "n2", "h1", "1")
			f.ds.Status.UpdatedNumberScheduled = 2
		}, Progressing, ReasonOnDelete, "delete the old pods (agent-old-n2)"},

		{"new pod in ErrImagePull fails", func(f *dsFixture) {
			f.pods[0].Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}}
		}, Failed, ReasonPodFailing, "pod agent-new-n1 container \"agent\": ErrImagePull: not found"},
		{"new pod crash-looping fails", func(f *dsFixture) {
			f.pods[0].Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
			f.pods[0].Status.ContainerStatuses[0].RestartCount = 5
		}, Failed, ReasonPodFailing, "CrashLoopBackOff after 5 restarts"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newDS(t)
			tc.mutate(f)
			before := f.ds.DeepCopy()
			v := AssessDaemonSet(f.ds, f.revs, f.pods, Options{})
			assert.Equal(t, tc.state, v.State, v.String())
			assert.Equal(t, tc.reason, v.Reason, v.String())
			assert.Contains(t, v.Message, tc.msg)
			assert.Equal(t, before, f.ds, "AssessDaemonSet must not mutate its input")
		})
	}
}

func TestCurrentDaemonSetRevision(t *testing.T) {
	f := newDS(t)
	r := CurrentDaemonSetRevision(f.ds, f.revs)
	assert.Equal(t, "h2", r.Hash)
	require.NotNil(t, r.Generation)
	assert.Equal(t, int64(2), *r.Generation)

	// Two revisions with the current template (a rollback re-used one):
	// the highest .revision wins, as dedupCurHistories keeps it.
	dup := revisionOf(t, f.ds, "h2b", 5)
	r = CurrentDaemonSetRevision(f.ds, append(f.revs, dup))
	assert.Equal(t, "h2b", r.Hash)

	// A revision of another DaemonSet never counts.
	foreign := revisionOf(t, f.ds, "x", 9)
	foreign.OwnerReferences[0].UID = "other"
	r = CurrentDaemonSetRevision(f.ds, []appsv1.ControllerRevision{f.revs[0], foreign})
	assert.Empty(t, r.Hash)

	// An unlabelled revision is known by its name (constructHistory labels it so).
	unlabelled := f.revs[1]
	unlabelled.Labels = nil
	r = CurrentDaemonSetRevision(f.ds, []appsv1.ControllerRevision{unlabelled})
	assert.Equal(t, "agent-h2", r.Hash)
}

// TestDaemonSetPatchShape pins the patch shape getPatch records.
func TestDaemonSetPatchShape(t *testing.T) {
	ds := &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: dsTemplate("agent:v1")}}
	b, err := daemonSetPatch(ds)
	require.NoError(t, err)
	assert.JSONEq(t, `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"name":"agent","image":"agent:v1","resources":{}}]}}}}`, string(b))
}
