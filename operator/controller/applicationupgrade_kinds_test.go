package controller

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// statefulSet is StatefulSet name (2 replicas, container "main", image),
// with status and pods name-0, name-1 at revision rev, fully rolled out.
func statefulSet(name, image string) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: typesUID("uid-sts-" + name), Generation: 1},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: image}}}}},
	}
}

// stsStatus plays the StatefulSet controller: generation observed, the
// given counters, revisions current → update.
func (w *world) stsStatus(name string, updated int32, current, update string) {
	w.t.Helper()
	var s appsv1.StatefulSet
	require.NoError(w.t, w.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s))
	s.Status = appsv1.StatefulSetStatus{ObservedGeneration: s.Generation, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
		UpdatedReplicas: updated, CurrentReplicas: updated, CurrentRevision: current, UpdateRevision: update}
	require.NoError(w.t, w.c.Status().Update(context.Background(), &s))
}

// stsPod creates pod name-ord at revision rev, Running and Ready.
func (w *world) stsPod(name string, ord int, rev string) {
	w.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-" + strconv.Itoa(ord),
		Labels:          map[string]string{"app": name, appsv1.StatefulSetRevisionLabel: rev},
		OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: name, UID: typesUID("uid-sts-" + name), Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	require.NoError(w.t, w.c.Create(context.Background(), p))
}

// terminate marks pod terminating (kept by a finalizer) or, with gone,
// deletes it for good.
func (w *world) terminate(pod string, gone bool) {
	w.t.Helper()
	ctx := context.Background()
	var p corev1.Pod
	require.NoError(w.t, w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod}, &p))
	if gone {
		p.Finalizers = nil
		require.NoError(w.t, w.c.Update(ctx, &p))
		_ = w.c.Delete(ctx, &p)
		return
	}
	p.Finalizers = []string{"test/keep"}
	require.NoError(w.t, w.c.Update(ctx, &p))
	require.NoError(w.t, w.c.Delete(ctx, &p))
}

// TestStatefulSetCalleeGatesItsCaller: the graph db (StatefulSet) ← api.
// The StatefulSet's image is written by server-side apply; while its
// counters say done but the old db-0 is still terminating, api is not
// written; once db-0 is gone and back at the new revision, it is.
func TestStatefulSetCalleeGatesItsCaller(t *testing.T) {
	u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", UID: "uid-g", Generation: 1},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
			{Name: "db", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindStatefulSet, Name: "db"}, Image: "db:v2"},
			node("api", "db"),
		}}}
	w := newWorld(t, u, statefulSet("db", "db:v1"), deployment("d-api", "main", "api:v1"))
	w.rollOut("d-api", "")
	w.stsPod("db", 0, "db-1")
	w.stsPod("db", 1, "db-1")
	w.stsStatus("db", 2, "db-1", "db-1")

	var sts appsv1.StatefulSet
	for i := 0; i < 4 && sts.Spec.Template.Spec.Containers == nil || sts.Spec.Template.Spec.Containers[0].Image != "db:v2"; i++ {
		w.pass("g")
		require.NoError(t, w.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, &sts))
	}
	require.Equal(t, "db:v2", sts.Spec.Template.Spec.Containers[0].Image, "the StatefulSet's image is written")
	g := w.beta("g")
	assert.Equal(t, v1beta1.ComponentRollingOut, g.Status.Component("db").Phase)
	assert.Equal(t, v1beta1.KindStatefulSet, g.Status.Component("db").Kind)
	assert.Equal(t, "1 StatefulSet, 1 Deployment", g.Status.Workloads)

	// The controller replaced db-1 and reports every counter done, while
	// the old db-0 is still terminating.
	w.terminate("db-1", true)
	w.stsPod("db", 1, "db-2")
	w.terminate("db-0", false)
	w.stsStatus("db", 2, "db-2", "db-2")
	for i := 0; i < 3; i++ {
		g = w.pass("g")
	}
	d, _ := w.get("d-api")
	assert.Equal(t, "api:v1", d.Spec.Template.Spec.Containers[0].Image, "api must not be written while the old db-0 terminates")
	assert.Equal(t, v1beta1.ComponentRollingOut, g.Status.Component("db").Phase)
	assert.Contains(t, g.Status.Component("db").Message, "old pod db-0 (revision db-1) still exists (terminating)")

	w.terminate("db-0", true)
	w.stsPod("db", 0, "db-2")
	for i := 0; i < 3; i++ {
		g = w.pass("g")
	}
	d, _ = w.get("d-api")
	assert.Equal(t, "api:v2", d.Spec.Template.Spec.Containers[0].Image, "api is written once every old db pod is gone")
	assert.Equal(t, v1beta1.ComponentRolled, g.Status.Component("db").Phase)
}

// TestOnDeleteStatefulSetWaitsForAPerson: an OnDelete StatefulSet's
// component stays RollingOut with a message naming the pods to delete,
// and the upgrade's Ready condition carries the waiting reason.
func TestOnDeleteStatefulSetWaitsForAPerson(t *testing.T) {
	u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", UID: "uid-g", Generation: 1},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
			{Name: "db", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindStatefulSet, Name: "db"}, Image: "db:v2"},
		}}}
	sts := statefulSet("db", "db:v1")
	sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	w := newWorld(t, u, sts)
	w.stsPod("db", 0, "db-1")
	w.stsPod("db", 1, "db-1")
	w.stsStatus("db", 2, "db-1", "db-1")
	for i := 0; i < 3; i++ {
		w.pass("g")
	}
	w.stsStatus("db", 0, "db-1", "db-2")
	g := w.pass("g")
	c := g.Status.Component("db")
	assert.Equal(t, v1beta1.ComponentRollingOut, c.Phase)
	assert.Contains(t, c.Message, "Waiting for a person")
	assert.Contains(t, c.Message, "delete the old pods (db-0, db-1)")
	assert.Contains(t, g.Status.Message, "OnDelete")
}

// TestDaemonSetIsReadAndWritten: a DaemonSet component's image is written
// by server-side apply and its ControllerRevisions are read.
func TestDaemonSetIsReadAndWritten(t *testing.T) {
	u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", UID: "uid-g", Generation: 1},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
			{Name: "agent", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindDaemonSet, Name: "agent"}, Image: "agent:v2"},
		}}}
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent", UID: "uid-ds", Generation: 1},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "agent:v1"}}}}}}
	w := newWorld(t, u, ds)
	var seen []appsv1.ControllerRevision
	w.r.AssessDaemonSetFunc = func(d *appsv1.DaemonSet, revs []appsv1.ControllerRevision, pods []corev1.Pod, o rollout.Options) rollout.Verdict {
		seen = revs
		return rollout.AssessDaemonSet(d, revs, pods, o)
	}
	rev := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent-abc", Labels: map[string]string{"app": "agent"}},
		Data: runtime.RawExtension{Raw: []byte(`{}`)}, Revision: 1}
	require.NoError(t, w.c.Create(context.Background(), rev))
	for i := 0; i < 3; i++ {
		w.pass("g")
	}
	var got appsv1.DaemonSet
	require.NoError(t, w.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "agent"}, &got))
	assert.Equal(t, "agent:v2", got.Spec.Template.Spec.Containers[0].Image)
	require.Len(t, seen, 1, "the DaemonSet's ControllerRevisions are listed by its selector")
	g := w.beta("g")
	assert.Equal(t, v1beta1.ComponentRollingOut, g.Status.Component("agent").Phase)
	assert.Equal(t, v1beta1.KindDaemonSet, g.Status.Component("agent").Kind)
}

// TestMapperRoutesEveryKind: events of StatefulSets, DaemonSets, their pods
// and a DaemonSet's ControllerRevisions reach the upgrades referencing them.
func TestMapperRoutesEveryKind(t *testing.T) {
	u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", UID: "uid-g", Generation: 1},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
			{Name: "db", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindStatefulSet, Name: "db"}, Image: "db:v2"},
			{Name: "agent", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindDaemonSet, Name: "agent"}, Image: "agent:v2"},
		}}}
	w := newWorld(t, u)
	m := Mapper{Reader: w.c}
	ctx := context.Background()
	owned := func(kind, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name + "-x", OwnerReferences: []metav1.OwnerReference{{Kind: kind, Name: name, Controller: ptr.To(true)}}}
	}
	assert.Len(t, m.StatefulSet(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}), 1)
	assert.Empty(t, m.Deployment(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}), "a Deployment named db is another workload")
	assert.Len(t, m.DaemonSet(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"}}), 1)
	assert.Len(t, m.Pod(ctx, &corev1.Pod{ObjectMeta: owned("StatefulSet", "db")}), 1)
	assert.Len(t, m.Pod(ctx, &corev1.Pod{ObjectMeta: owned("DaemonSet", "agent")}), 1)
	assert.Len(t, m.ControllerRevision(ctx, &appsv1.ControllerRevision{ObjectMeta: owned("DaemonSet", "agent")}), 1)
	assert.Empty(t, m.ControllerRevision(ctx, &appsv1.ControllerRevision{ObjectMeta: owned("StatefulSet", "db")}))
}

// The impersonation path covers every kind: a StatefulSet component of an
// upgrade with spec.serviceAccountName is read and written through the
// impersonating client, and a ServiceAccount without get on statefulsets
// fails the component naming the kind to grant.
func TestStatefulSetThroughTheServiceAccount(t *testing.T) {
	u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", UID: "uid-g", Generation: 1},
		Spec: v1beta1.ApplicationUpgradeSpec{ServiceAccountName: "deployer", Components: []v1beta1.Component{
			{Name: "db", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindStatefulSet, Name: "db"}, Image: "db:v2"},
		}}}
	w := newWorld(t, u, statefulSet("db", "db:v1"))
	w.stsPod("db", 0, "db-1")
	w.stsPod("db", 1, "db-1")
	w.stsStatus("db", 2, "db-1", "db-1")
	var asked []string
	w.r.Impersonate = func(namespace, name string) (client.Client, error) {
		asked = append(asked, namespace+"/"+name)
		return w.c, nil
	}
	for i := 0; i < 3; i++ {
		w.pass("g")
	}
	var sts appsv1.StatefulSet
	require.NoError(t, w.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db"}, &sts))
	assert.Equal(t, "db:v2", sts.Spec.Template.Spec.Containers[0].Image)
	assert.NotEmpty(t, asked)

	w2 := newWorld(t, u.DeepCopy(), statefulSet("db", "db:v1"))
	w2.r.Impersonate = func(string, string) (client.Client, error) {
		return interceptor.NewClient(w2.c.(client.WithWatch), interceptor.Funcs{
			Get: func(_ context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
				return apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, key.Name, fmt.Errorf("RBAC: no"))
			},
		}), nil
	}
	w2.pass("g")
	got := w2.pass("g")
	assert.Equal(t, v1beta1.PhaseFailed, got.Status.Phase)
	assert.Contains(t, got.Status.Message, "serviceaccount job-system/deployer may not get statefulset job-system/db")
	assert.Contains(t, got.Status.Message, "grant it get and patch on that StatefulSet")
}
