package simulator

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func newTestSim() (*Sim, client.Client) {
	s := New(Options{Seed: 1, Scheme: testScheme()})
	return s, s.Client()
}

func testDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"tier": "backend"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img:v1"}}}},
		},
	}
}

func testPod(name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "img:v1"}}}}
}

func mustCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %s: %v", obj.GetName(), err)
	}
}

func TestCreateSetsServerFields(t *testing.T) {
	s, c := newTestSim()
	s.Schedule(1500*time.Millisecond, "advance", func() {})
	if _, err := s.RunFor(context.Background(), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	d := testDeployment("web")
	d.Status.Replicas = 7 // reset by the server
	mustCreate(t, c, d)
	if d.UID == "" || d.ResourceVersion == "" || d.Generation != 1 {
		t.Errorf("uid %q rv %q generation %d: want all set, generation 1", d.UID, d.ResourceVersion, d.Generation)
	}
	if want := DefaultStart.Add(2 * time.Second); !d.CreationTimestamp.Time.Equal(want) {
		t.Errorf("creationTimestamp %s, want %s (second precision)", d.CreationTimestamp, want)
	}
	if d.Status.Replicas != 0 {
		t.Errorf("status.replicas %d after create, want 0 (status reset)", d.Status.Replicas)
	}
	if d.Kind != "Deployment" || d.APIVersion != "apps/v1" {
		t.Errorf("TypeMeta %q %q not filled", d.APIVersion, d.Kind)
	}
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Spec.ProgressDeadlineSeconds == nil ||
		*d.Spec.Template.Spec.TerminationGracePeriodSeconds != 30 {
		t.Errorf("defaults not applied: %+v", d.Spec)
	}
	if err := c.Create(context.Background(), testDeployment("web")); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create: %v, want AlreadyExists", err)
	}
	withRV := testDeployment("other")
	withRV.ResourceVersion = "5"
	if err := c.Create(context.Background(), withRV); !apierrors.IsBadRequest(err) {
		t.Errorf("create with resourceVersion: %v, want BadRequest", err)
	}
	bad := testDeployment("bad")
	bad.Spec.Selector = nil
	if err := c.Create(context.Background(), bad); !apierrors.IsInvalid(err) {
		t.Errorf("create without selector: %v, want Invalid", err)
	}
}

func TestGenerateNameUsesSeededSuffix(t *testing.T) {
	names := func(seed int64) []string {
		s := New(Options{Seed: seed})
		var out []string
		for range 3 {
			p := testPod("", "n")
			p.GenerateName = "web-"
			mustCreate(t, s.Client(), p)
			out = append(out, p.Name)
		}
		return out
	}
	a, b, other := names(3), names(3), names(4)
	for i := range a {
		if len(a[i]) != len("web-")+5 || a[i] != b[i] {
			t.Errorf("name %d: %q vs %q: want 5-char suffix, equal for equal seeds", i, a[i], b[i])
		}
	}
	if a[0] == other[0] && a[1] == other[1] {
		t.Errorf("seeds 3 and 4 generated the same names %v", a)
	}
}

func TestUpdateGenerationAndConflicts(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		mutate  func(d *appsv1.Deployment)
		wantGen int64
	}{
		{"spec change bumps", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) }, 2},
		{"label change does not", func(d *appsv1.Deployment) { d.Labels["x"] = "y" }, 1},
		{"annotation change bumps a Deployment", func(d *appsv1.Deployment) { d.Annotations = map[string]string{"a": "b"} }, 2},
		{"status change through main update is ignored", func(d *appsv1.Deployment) { d.Status.Replicas = 9 }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newTestSim()
			d := testDeployment("web")
			mustCreate(t, c, d)
			tt.mutate(d)
			if err := c.Update(ctx, d); err != nil {
				t.Fatal(err)
			}
			if d.Generation != tt.wantGen || d.Status.Replicas != 0 {
				t.Errorf("generation %d status.replicas %d, want %d and 0", d.Generation, d.Status.Replicas, tt.wantGen)
			}
		})
	}
	t.Run("stale resourceVersion conflicts, no-op keeps it", func(t *testing.T) {
		_, c := newTestSim()
		d := testDeployment("web")
		mustCreate(t, c, d)
		stale := d.DeepCopy()
		rv := d.ResourceVersion
		if err := c.Update(ctx, d); err != nil || d.ResourceVersion != rv {
			t.Fatalf("no-op update: err %v rv %s→%s, want unchanged", err, rv, d.ResourceVersion)
		}
		d.Spec.Paused = true
		if err := c.Update(ctx, d); err != nil {
			t.Fatal(err)
		}
		stale.Spec.Replicas = ptr.To[int32](3)
		if err := c.Update(ctx, stale); !apierrors.IsConflict(err) {
			t.Errorf("stale update: %v, want Conflict", err)
		}
	})
}

func TestStatusSubresource(t *testing.T) {
	ctx := context.Background()
	_, c := newTestSim()
	d := testDeployment("web")
	mustCreate(t, c, d)
	d.Status.Replicas = 2
	d.Status.ObservedGeneration = 1
	d.Spec.Replicas = ptr.To[int32](9) // ignored by /status
	if err := c.Status().Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	got := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Replicas != 2 || *got.Spec.Replicas != 2 || got.Generation != 1 {
		t.Errorf("status %d spec %d generation %d: want 2, 2, 1", got.Status.Replicas, *got.Spec.Replicas, got.Generation)
	}
	// custom resources: status patch through /status only
	w := &widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}, Spec: widgetSpec{Size: 1}}
	mustCreate(t, c, w)
	patch := client.MergeFrom(w.DeepCopyObject().(*widget))
	w.Status.Phase = "Ready"
	w.Spec.Size = 5
	if err := c.Status().Patch(ctx, w, patch); err != nil {
		t.Fatal(err)
	}
	if w.Status.Phase != "Ready" || w.Spec.Size != 1 || w.Generation != 1 {
		t.Errorf("after status patch: phase %q size %d generation %d, want Ready 1 1", w.Status.Phase, w.Spec.Size, w.Generation)
	}
	w.ResourceVersion = ""
	if err := c.Update(ctx, w); !apierrors.IsInvalid(err) {
		t.Errorf("unconditional update of a custom resource: %v, want Invalid", err)
	}
}

func TestPatchTypes(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		patch   client.Patch
		target  client.Object
		check   func(obj client.Object) bool
		wantErr func(error) bool
	}{
		{"merge", client.RawPatch(types.MergePatchType, []byte(`{"spec":{"size":3}}`)), &widget{},
			func(o client.Object) bool { return o.(*widget).Spec.Size == 3 && o.GetGeneration() == 2 }, nil},
		{"json patch", client.RawPatch(types.JSONPatchType, []byte(`[{"op":"add","path":"/spec/items/-","value":"c"}]`)), &widget{},
			func(o client.Object) bool { return len(o.(*widget).Spec.Items) == 3 }, nil},
		{"strategic merge on a custom resource is refused", client.RawPatch(types.StrategicMergePatchType, []byte(`{"spec":{"size":3}}`)), &widget{},
			nil, func(err error) bool { return apierrors.ReasonForError(err) == metav1.StatusReasonUnsupportedMediaType }},
		{"strategic merge merges containers by name", client.RawPatch(types.StrategicMergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"img:v2"}]}}}}`)), &appsv1.Deployment{},
			func(o client.Object) bool {
				cs := o.(*appsv1.Deployment).Spec.Template.Spec.Containers
				return len(cs) == 2 && cs[0].Image == "img:v2" && cs[1].Name == "side"
			}, nil},
		{"optimistic lock with a stale resourceVersion conflicts",
			client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"999"},"spec":{"size":4}}`)), &widget{},
			nil, apierrors.IsConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := newTestSim()
			mustCreate(t, c, &widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}, Spec: widgetSpec{Items: []string{"a", "b"}}})
			d := testDeployment("x")
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "side", Image: "side:v1"})
			mustCreate(t, c, d)
			obj := tt.target
			obj.SetNamespace("ns")
			obj.SetName("x")
			err := c.Patch(ctx, obj, tt.patch)
			if tt.wantErr != nil {
				if !tt.wantErr(err) {
					t.Errorf("err %v: not the expected kind", err)
				}
				return
			}
			if err != nil || !tt.check(obj) {
				t.Errorf("err %v, object %+v", err, obj)
			}
		})
	}
}

func TestMergeFromWithOptimisticLock(t *testing.T) {
	ctx := context.Background()
	_, c := newTestSim()
	w := &widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}
	mustCreate(t, c, w)
	stale := w.DeepCopyObject().(*widget)
	w.Spec.Size = 1
	if err := c.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	p := client.MergeFromWithOptions(stale.DeepCopyObject().(*widget), client.MergeFromWithOptimisticLock{})
	stale.Spec.Size = 2
	if err := c.Patch(ctx, stale, p); !apierrors.IsConflict(err) {
		t.Errorf("patch from stale copy: %v, want Conflict", err)
	}
	fresh := w.DeepCopyObject().(*widget)
	p = client.MergeFromWithOptions(w.DeepCopyObject().(*widget), client.MergeFromWithOptimisticLock{})
	fresh.Spec.Size = 2
	if err := c.Patch(ctx, fresh, p); err != nil || fresh.Spec.Size != 2 {
		t.Errorf("patch from fresh copy: %v size %d", err, fresh.Spec.Size)
	}
}

func TestListSelectorsAndIndexes(t *testing.T) {
	ctx := context.Background()
	s, c := newTestSim()
	for _, p := range []*corev1.Pod{testPod("b", "n1"), testPod("a", "n2"), testPod("c", "n1")} {
		mustCreate(t, c, p)
	}
	other := testPod("a", "n1")
	other.Namespace, other.Labels = "other", map[string]string{"app": "y"}
	mustCreate(t, c, other)
	if err := s.FieldIndexer().IndexField(ctx, &corev1.Pod{}, "node", func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts []client.ListOption
		want []string
	}{
		{"all, in namespace/name order", nil, []string{"ns/a", "ns/b", "ns/c", "other/a"}},
		{"namespace", []client.ListOption{client.InNamespace("other")}, []string{"other/a"}},
		{"labels", []client.ListOption{client.MatchingLabels{"app": "x"}}, []string{"ns/a", "ns/b", "ns/c"}},
		{"metadata.name", []client.ListOption{client.MatchingFields{"metadata.name": "a"}}, []string{"ns/a", "other/a"}},
		{"index", []client.ListOption{client.InNamespace("ns"), client.MatchingFields{"node": "n1"}}, []string{"ns/b", "ns/c"}},
		{"built-in pod field", []client.ListOption{client.MatchingFields{"spec.nodeName": "n2"}}, []string{"ns/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := &corev1.PodList{}
			if err := c.List(ctx, list, tt.opts...); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range list.Items {
				got = append(got, p.Namespace+"/"+p.Name)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
	if err := c.List(ctx, &corev1.PodList{}, client.MatchingFields{"spec.unknown": "x"}); !apierrors.IsBadRequest(err) {
		t.Errorf("unregistered field: %v, want BadRequest", err)
	}
	if err := s.FieldIndexer().IndexField(ctx, &corev1.Pod{}, "node", nil); err == nil {
		t.Errorf("registering an index twice succeeded")
	}
}

func TestGracefulPodDeletion(t *testing.T) {
	ctx := context.Background()
	s, c := newTestSim()
	p := testPod("p", "n1")
	p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](20)
	mustCreate(t, c, p)
	if err := c.Delete(ctx, p); err != nil {
		t.Fatal(err)
	}
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
		t.Fatalf("pod gone after graceful delete: %v", err)
	}
	if got.DeletionTimestamp == nil || !got.DeletionTimestamp.Time.Equal(s.Now().Add(20*time.Second)) ||
		*got.DeletionGracePeriodSeconds != 20 || got.Generation != 2 {
		t.Fatalf("deletionTimestamp %v grace %v generation %d: want now+20s, 20, 2", got.DeletionTimestamp, got.DeletionGracePeriodSeconds, got.Generation)
	}
	if err := c.Delete(ctx, got, client.GracePeriodSeconds(5)); err != nil {
		t.Fatal(err)
	}
	_ = c.Get(ctx, client.ObjectKeyFromObject(p), got)
	if *got.DeletionGracePeriodSeconds != 5 || !got.DeletionTimestamp.Time.Equal(s.Now().Add(5*time.Second)) {
		t.Errorf("shortened grace: %v at %v, want 5 at now+5s", *got.DeletionGracePeriodSeconds, got.DeletionTimestamp)
	}
	if err := c.Delete(ctx, got, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(p), got); !apierrors.IsNotFound(err) {
		t.Errorf("after final delete: %v, want NotFound", err)
	}
	unscheduled := testPod("u", "")
	mustCreate(t, c, unscheduled)
	_ = c.Delete(ctx, unscheduled)
	if err := c.Get(ctx, client.ObjectKeyFromObject(unscheduled), got); !apierrors.IsNotFound(err) {
		t.Errorf("unscheduled pod: %v, want deleted at once", err)
	}
}

func TestFinalizersHoldDeletion(t *testing.T) {
	ctx := context.Background()
	_, c := newTestSim()
	w := &widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", Finalizers: []string{"test/hold"}}}
	mustCreate(t, c, w)
	if err := c.Delete(ctx, w, client.Preconditions{UID: ptr.To(types.UID("wrong"))}); !apierrors.IsConflict(err) {
		t.Errorf("delete with wrong UID precondition: %v, want Conflict", err)
	}
	if err := c.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil || w.DeletionTimestamp == nil {
		t.Fatalf("finalized object: err %v deletionTimestamp %v, want kept and marked", err, w.DeletionTimestamp)
	}
	w.Finalizers = nil
	if err := c.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); !apierrors.IsNotFound(err) {
		t.Errorf("after the last finalizer: %v, want NotFound", err)
	}
}

func TestSubscribeSeesCommitsInOrder(t *testing.T) {
	ctx := context.Background()
	s, c := newTestSim()
	var got []string
	s.Subscribe(func(ev WatchEvent) {
		old := "-"
		if ev.Old != nil {
			old = ev.Old.GetResourceVersion()
		}
		got = append(got, string(ev.Type)+" "+ev.Object.GetName()+" "+old+"→"+ev.Object.GetResourceVersion())
	})
	w := &widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w"}}
	mustCreate(t, c, w)
	w.Spec.Size = 1
	_ = c.Update(ctx, w)
	_ = c.Update(ctx, w) // no-op: no event
	_ = c.Delete(ctx, w)
	want := []string{"ADDED w -→1", "MODIFIED w 1→2", "DELETED w 2→3"}
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %q, want %q", i, got[i], want[i])
		}
	}
	_ = watch.Added
}

func TestUnstructuredAccess(t *testing.T) {
	ctx := context.Background()
	_, c := newTestSim()
	mustCreate(t, c, testDeployment("web"))
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, u); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); r != 2 {
		t.Errorf("spec.replicas %d, want 2", r)
	}
	ul := &unstructured.UnstructuredList{}
	ul.SetAPIVersion("apps/v1")
	ul.SetKind("DeploymentList")
	if err := c.List(ctx, ul); err != nil || len(ul.Items) != 1 {
		t.Errorf("list: %v, %d items", err, len(ul.Items))
	}
}

func TestGarbageCollectionCascades(t *testing.T) {
	ctx := context.Background()
	s := New(Options{Seed: 1})
	s.InstallKubeControllers(KubeOptions{})
	c := s.Client()
	d := testDeployment("web")
	mustCreate(t, c, d)
	if _, err := s.RunFor(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	pods := &corev1.PodList{}
	_ = c.List(ctx, pods, client.InNamespace("ns"))
	if len(pods.Items) != 2 {
		t.Fatalf("%d pods before delete, want 2", len(pods.Items))
	}
	if err := c.Delete(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunFor(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	rss := &appsv1.ReplicaSetList{}
	_ = c.List(ctx, rss, client.InNamespace("ns"))
	_ = c.List(ctx, pods, client.InNamespace("ns"))
	if len(rss.Items)+len(pods.Items) != 0 {
		t.Errorf("%d replicasets and %d pods left after deleting their Deployment", len(rss.Items), len(pods.Items))
	}
}

// A typed list whose Items is empty but has room is filled in place, as
// append fills such a slice (the operator's assess reuses its lists so);
// a list with items gets a new slice and the old one is left as it was.
func TestListFillsAnEmptyItemsInPlace(t *testing.T) {
	_, c := newTestSim()
	ctx := context.Background()
	mustCreate(t, c, testPod("a", "n1"))
	mustCreate(t, c, testPod("b", "n1"))
	buf := make([]corev1.Pod, 3)
	pods := corev1.PodList{Items: buf[:0]}
	if err := c.List(ctx, &pods, client.InNamespace("ns"), client.UnsafeDisableDeepCopy); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 2 || pods.Items[0].Name != "a" || pods.Items[1].Name != "b" {
		t.Fatalf("items %v: want pods a and b", pods.Items)
	}
	if &pods.Items[0] != &buf[0] {
		t.Error("an empty Items with room was replaced by a new slice: want it filled in place")
	}
	kept := pods.Items
	if err := c.List(ctx, &pods, client.InNamespace("ns")); err != nil {
		t.Fatal(err)
	}
	if &pods.Items[0] == &kept[0] {
		t.Error("a list with items was filled in place: want a new slice")
	}
	if kept[0].Name != "a" || kept[1].Name != "b" {
		t.Errorf("the old items changed: %s, %s", kept[0].Name, kept[1].Name)
	}
	empty := corev1.PodList{Items: make([]corev1.Pod, 0, 1)}
	if err := c.List(ctx, &empty, client.InNamespace("other")); err != nil {
		t.Fatal(err)
	}
	if empty.Items == nil || len(empty.Items) != 0 {
		t.Errorf("an empty result: items %v, want empty and not nil (as a fresh list's)", empty.Items)
	}
}
