package eventlog

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

func sts(rv, image string) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "u1", ResourceVersion: rv}}
	s.Spec.Template.Spec.Containers = []corev1.Container{{Name: "db", Image: image}}
	return s
}

// revisionOf is a ControllerRevision of s's template as both controllers
// write it: {"spec":{"template":{...,"$patch":"replace"}}}.
func revisionOf(t *testing.T, owner *appsv1.StatefulSet, name, rv string) *appsv1.ControllerRevision {
	data, err := json.Marshal(owner.Spec.Template)
	require.NoError(t, err)
	var tpl map[string]any
	require.NoError(t, json.Unmarshal(data, &tpl))
	tpl["$patch"] = "replace"
	raw, err := json.Marshal(map[string]any{"spec": map[string]any{"template": tpl}})
	require.NoError(t, err)
	return &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "u1", Controller: ptr.To(true)}}},
		Data: runtime.RawExtension{Raw: raw}}
}

func stsPod(name, rev, rv string, deleting bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv,
		Labels:          map[string]string{appsv1.ControllerRevisionHashLabelKey: rev},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "u1", Controller: ptr.To(true)}}}}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{Time: t0}
	}
	return p
}

// A StatefulSet's pods are judged by controller-revision-hash: the
// Revision event (from the ControllerRevision holding the new template)
// makes the new revision's pods new; the old pod-0, terminating, stays old
// until deleted; a Deployment of the same name is another workload.
func TestRecorderJudgesStatefulSetPodsByRevision(t *testing.T) {
	r := NewRecorder(t0, nil)
	v1, v2 := sts("1", "db:1"), sts("5", "db:2")
	r.Observe(watch.Added, v1, t0)
	r.Observe(watch.Added, revisionOf(t, v1, "db-aaa", "2"), t0)
	r.Observe(watch.Added, stsPod("db-0", "db-aaa", "3", false), t0)
	r.Observe(watch.Added, stsPod("db-1", "db-aaa", "4", false), t0)
	// the pods' revision arrives after the write (another watch)
	r.Observe(watch.Modified, v2, t0)
	r.Observe(watch.Added, revisionOf(t, v2, "db-bbb", "6"), t0)
	r.Observe(watch.Deleted, stsPod("db-1", "db-aaa", "7", true), t0)
	r.Observe(watch.Added, stsPod("db-1", "db-bbb", "8", false), t0)
	r.Observe(watch.Modified, stsPod("db-0", "db-aaa", "9", true), t0)

	events := r.Events()
	assert.Equal(t, []string{DeploymentWrite, Revision, PodCreated, PodCreated, DeploymentWrite, Revision, PodDeleted, PodCreated, PodDeleting}, kinds(events))
	assert.Equal(t, "StatefulSet", events[4].Kind)
	assert.Equal(t, "db:2", events[4].Image)
	assert.Equal(t, "db-bbb", events[5].HashAfter)
	assert.Equal(t, "db-aaa", events[2].Hash)

	s := Final(events)
	assert.Equal(t, []string{"ns/db-0"}, s.OldWorkloadPods(KindStatefulSet, "ns", "db"))
	assert.Empty(t, s.OldPods("ns", "db"), "a Deployment named db is another workload")
	assert.False(t, s.Old(s.Pods["ns/db-1"]))
}

// A revert: the written template is already held by a revision, so the
// write itself says the hash and no Revision event follows.
func TestRecorderStatefulSetRevertNamesKnownRevision(t *testing.T) {
	r := NewRecorder(t0, nil)
	v1, v2 := sts("1", "db:1"), sts("3", "db:2")
	r.Observe(watch.Added, v1, t0)
	r.Observe(watch.Added, revisionOf(t, v1, "db-aaa", "2"), t0)
	r.Observe(watch.Modified, v2, t0)
	r.Observe(watch.Added, revisionOf(t, v2, "db-bbb", "4"), t0)
	r.Observe(watch.Modified, sts("5", "db:1"), t0)
	events := r.Events()
	require.Equal(t, []string{DeploymentWrite, Revision, DeploymentWrite, Revision, DeploymentWrite}, kinds(events))
	assert.Equal(t, "db-aaa", events[4].HashAfter)
	assert.Equal(t, "db-bbb", events[4].HashBefore)
}
