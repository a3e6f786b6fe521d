package simulator

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var gadgetKey = types.NamespacedName{Namespace: "ns", Name: "g"}

func newGadget() *gadgetV1 {
	return &gadgetV1{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g", Labels: map[string]string{"app": "toy"}},
		Spec: gadgetV1Spec{Size: 3, Color: "red"}}
}

func getV1(t *testing.T, c client.Client) *gadgetV1 {
	t.Helper()
	var g gadgetV1
	if err := c.Get(context.Background(), gadgetKey, &g); err != nil {
		t.Fatalf("get v1: %v", err)
	}
	return &g
}

func getV2(t *testing.T, c client.Client) *gadgetV2 {
	t.Helper()
	var g gadgetV2
	if err := c.Get(context.Background(), gadgetKey, &g); err != nil {
		t.Fatalf("get v2: %v", err)
	}
	return &g
}

func TestConversionCreateAtSpokeIsStoredAtStorageVersion(t *testing.T) {
	s, _ := newGadgetSim()
	c := s.Client()
	g := newGadget()
	g.Status.Phase = "ignored" // create resets status, at the request's version
	mustCreate(t, c, g)
	if g.GetObjectKind().GroupVersionKind().Version != "v1" || g.Generation != 1 || g.UID == "" || g.Status.Phase != "" {
		t.Errorf("create answered %+v %+v: want v1, generation 1, uid set, status reset", g.TypeMeta, g.ObjectMeta)
	}
	if stored := s.store.get(gadgetV2GV.WithKind("Gadget"), gadgetKey); stored == nil {
		t.Fatalf("nothing stored at v2; kinds %v", s.store.kindsSorted())
	}
	if s.store.get(gadgetV1GV.WithKind("Gadget"), gadgetKey) != nil {
		t.Error("an object is stored at v1 too: want one object, at the storage version")
	}
	g2 := getV2(t, c)
	if g2.Spec.Dimensions.Width != 3 || g2.Spec.Colour != "red" || g2.ResourceVersion != g.ResourceVersion || g2.UID != g.UID || g2.Labels["app"] != "toy" {
		t.Errorf("v2 read %+v: want width 3, colour red, the same resourceVersion, uid and labels", g2)
	}
	if g2.APIVersion != gadgetV2GV.String() {
		t.Errorf("v2 read has apiVersion %q", g2.APIVersion)
	}
	var l1 gadgetV1List
	var l2 gadgetV2List
	if err := c.List(context.Background(), &l1, client.InNamespace("ns")); err != nil || len(l1.Items) != 1 || l1.Items[0].Spec.Size != 3 {
		t.Errorf("list v1: %v %+v", err, l1.Items)
	}
	if err := c.List(context.Background(), &l2, client.MatchingLabels{"app": "toy"}); err != nil || len(l2.Items) != 1 || l2.Items[0].Spec.Dimensions.Width != 3 {
		t.Errorf("list v2: %v %+v", err, l2.Items)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gadgetV1GV.WithKind("Gadget"))
	if err := c.Get(context.Background(), gadgetKey, u); err != nil || u.GetAPIVersion() != "toy.sim.dev/v1" {
		t.Errorf("unstructured get at v1: %v, apiVersion %q", err, u.GetAPIVersion())
	}
	if size, _, _ := unstructured.NestedInt64(u.Object, "spec", "size"); size != 3 {
		t.Errorf("unstructured v1 spec.size = %d, want 3", size)
	}
}

func TestConversionUpdateAcrossVersionsKeepsResourceVersionSemantics(t *testing.T) {
	s, _ := newGadgetSim()
	c := s.Client()
	ctx := context.Background()
	mustCreate(t, c, newGadget())
	g2 := getV2(t, c)
	g1 := getV1(t, c)

	g2.Spec.Tags = []string{"a", "b"}
	if err := c.Update(ctx, g2); err != nil {
		t.Fatalf("update v2: %v", err)
	}
	if g2.Generation != 2 {
		t.Errorf("spec change at v2: generation %d, want 2", g2.Generation)
	}
	g1.Spec.Size = 9 // read before the v2 update: stale
	if err := c.Update(ctx, g1); !apierrors.IsConflict(err) {
		t.Fatalf("stale v1 update: %v, want a 409 Conflict", err)
	}

	g1 = getV1(t, c)
	if g1.ResourceVersion != g2.ResourceVersion || g1.Annotations[gadgetTagsAnnotation] != "a,b" {
		t.Errorf("v1 read after the v2 update: rv %s (want %s), annotations %v", g1.ResourceVersion, g2.ResourceVersion, g1.Annotations)
	}
	rv := g1.ResourceVersion
	if err := c.Update(ctx, g1); err != nil || g1.ResourceVersion != rv {
		t.Errorf("no-op v1 update: %v, rv %s → %s: want no write", err, rv, g1.ResourceVersion)
	}
	g1.Labels["extra"] = "yes"
	if err := c.Update(ctx, g1); err != nil || g1.Generation != 2 || g1.ResourceVersion == rv {
		t.Errorf("label-only v1 update: %v, generation %d (want 2), rv %s (want new)", err, g1.Generation, g1.ResourceVersion)
	}
	g1.Spec.Size = 9
	if err := c.Update(ctx, g1); err != nil || g1.Generation != 3 {
		t.Errorf("spec change at v1: %v, generation %d, want 3", err, g1.Generation)
	}
	g2 = getV2(t, c)
	if g2.Spec.Dimensions.Width != 9 || strings.Join(g2.Spec.Tags, ",") != "a,b" || g2.Labels["extra"] != "yes" {
		t.Errorf("v2 after v1 updates: %+v: want width 9, tags kept through v1, label extra", g2)
	}
}

func TestConversionStatusSubresourceAtEitherVersion(t *testing.T) {
	s, _ := newGadgetSim()
	c := s.Client()
	ctx := context.Background()
	mustCreate(t, c, newGadget())

	g1 := getV1(t, c)
	g1.Status.Phase = "running"
	g1.Spec.Size = 100 // ignored by /status
	if err := c.Status().Update(ctx, g1); err != nil {
		t.Fatalf("status update v1: %v", err)
	}
	g2 := getV2(t, c)
	if g2.Status.State != "RUNNING" || g2.Spec.Dimensions.Width != 3 || g2.Generation != 1 {
		t.Errorf("after v1 /status: %+v: want state RUNNING, width 3, generation 1", g2)
	}

	patch := client.MergeFrom(g2.DeepCopyObject().(*gadgetV2))
	g2.Status.State = "DONE"
	if err := c.Status().Patch(ctx, g2, patch); err != nil {
		t.Fatalf("status patch v2: %v", err)
	}
	g1 = getV1(t, c)
	if g1.Status.Phase != "done" {
		t.Errorf("v1 status after v2 /status patch: %q, want done", g1.Status.Phase)
	}

	g1.Status.Phase = "overwritten" // the main endpoint keeps status
	g1.Spec.Color = "blue"
	if err := c.Update(ctx, g1); err != nil {
		t.Fatalf("update v1: %v", err)
	}
	if g1.Status.Phase != "done" || g1.Generation != 2 {
		t.Errorf("main endpoint at v1: status %q generation %d, want done and 2", g1.Status.Phase, g1.Generation)
	}
}

func TestConversionPatchAppliesAtTheRequestVersion(t *testing.T) {
	s, _ := newGadgetSim()
	c := s.Client()
	ctx := context.Background()
	mustCreate(t, c, newGadget())
	g2 := getV2(t, c)
	g2.Spec.Tags = []string{"keep"}
	if err := c.Update(ctx, g2); err != nil {
		t.Fatal(err)
	}

	g1 := getV1(t, c)
	stale := g1.DeepCopyObject().(*gadgetV1)
	if err := c.Patch(ctx, g1, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"size":7}}`))); err != nil {
		t.Fatalf("merge patch at v1: %v", err)
	}
	if g1.Spec.Size != 7 || g1.Generation != 3 {
		t.Errorf("patched v1: size %d generation %d, want 7 and 3", g1.Spec.Size, g1.Generation)
	}
	g2 = getV2(t, c)
	if g2.Spec.Dimensions.Width != 7 || strings.Join(g2.Spec.Tags, ",") != "keep" {
		t.Errorf("v2 after v1 patch: %+v: want width 7, tags kept", g2.Spec)
	}

	patch := client.MergeFromWithOptions(stale.DeepCopyObject().(*gadgetV1), client.MergeFromWithOptimisticLock{})
	stale.Spec.Color = "green"
	if err := c.Patch(ctx, stale, patch); !apierrors.IsConflict(err) {
		t.Errorf("optimistic-lock patch with a stale resourceVersion at v1: %v, want a 409 Conflict", err)
	}
}

func TestConversionWatchAtBothVersions(t *testing.T) {
	s, _ := newGadgetSim()
	c := s.Client()
	ctx := context.Background()
	var atStorage, atV1 []WatchEvent
	s.Subscribe(func(ev WatchEvent) { atStorage = append(atStorage, ev) })
	s.Subscribe(func(ev WatchEvent) { atV1 = append(atV1, ev) }, gadgetV1GV)

	var seenV1, seenV2 []string
	recordTo := func(seen *[]string) reconcile.Func {
		return func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			*seen = append(*seen, req.Name)
			return reconcile.Result{}, nil
		}
	}
	mapV1 := func(_ context.Context, o client.Object) []reconcile.Request {
		g := o.(*gadgetV1) // panics unless delivered at v1
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: g.Namespace, Name: g.Name + "@" + g.Spec.Color}}}
	}
	s.AddController("v1", recordTo(&seenV1), Watch{Object: &gadgetV1{}, Map: mapV1})
	s.AddController("v2", recordTo(&seenV2), Watch{Object: &gadgetV2{}, Filter: func(ev WatchEvent) bool {
		_, ok := ev.Object.(*gadgetV2)
		return ok
	}})

	mustCreate(t, c, newGadget())
	g1 := getV1(t, c)
	g1.Spec.Color = "blue"
	if err := c.Update(ctx, g1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, nil, 0); err != nil {
		t.Fatal(err)
	}

	if len(atStorage) != 2 || len(atV1) != 2 {
		t.Fatalf("events: %d at storage, %d at v1; want 2 each", len(atStorage), len(atV1))
	}
	if _, ok := atStorage[1].Object.(*gadgetV2); !ok {
		t.Errorf("default subscriber got %T, want the storage version", atStorage[1].Object)
	}
	ev := atV1[1]
	newer, ok1 := ev.Object.(*gadgetV1)
	older, ok2 := ev.Old.(*gadgetV1)
	if !ok1 || !ok2 || ev.Type != watch.Modified || newer.Spec.Color != "blue" || older.Spec.Color != "red" || newer.ResourceVersion != g1.ResourceVersion {
		t.Errorf("v1 subscriber got %s %T (old %T): %+v", ev.Type, ev.Object, ev.Old, ev)
	}
	if got := strings.Join(seenV1, " "); got != "g@red g@blue" {
		t.Errorf("v1 controller reconciled %q, want old and new object mapped at v1", got)
	}
	if got := strings.Join(seenV2, " "); got != "g" {
		t.Errorf("v2 controller reconciled %q, want g", got)
	}

	// a controller added later lists existing objects at its version
	var late []string
	s.AddController("late-v1", recordTo(&late), Watch{Object: &gadgetV1{}, Map: mapV1})
	if _, err := s.Run(ctx, nil, 0); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(late, " "); got != "g@blue" {
		t.Errorf("late v1 controller reconciled %q, want g@blue", got)
	}
}

func TestConversionErrorIsAnInternalError(t *testing.T) {
	s, gc := newGadgetSim()
	c := s.Client()
	ctx := context.Background()
	var atV1, atStorage int
	s.Subscribe(func(WatchEvent) { atV1++ }, gadgetV1GV)
	s.Subscribe(func(WatchEvent) { atStorage++ })
	mustCreate(t, c, newGadget())

	gc.fail = true // the webhook goes down
	gc.install(s)
	var g gadgetV1
	err := c.Get(ctx, gadgetKey, &g)
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "conversion webhook for toy.sim.dev/v2, Kind=Gadget failed: connection refused") {
		t.Errorf("get at v1 with a failing converter: %v, want an InternalError naming the webhook", err)
	}
	if err := c.List(ctx, &gadgetV1List{}); !apierrors.IsInternalError(err) {
		t.Errorf("list at v1: %v, want an InternalError", err)
	}
	second := newGadget()
	second.Name = "h"
	if err := c.Create(ctx, second); !apierrors.IsInternalError(err) {
		t.Errorf("create at v1: %v, want an InternalError", err)
	}
	if getV2(t, c).Name != "g" || s.store.get(gadgetV2GV.WithKind("Gadget"), types.NamespacedName{Namespace: "ns", Name: "h"}) != nil {
		t.Error("a failed conversion stored an object")
	}
	g2 := getV2(t, c) // the storage version needs no conversion
	g2.Labels["x"] = "y"
	if err := c.Update(ctx, g2); err != nil {
		t.Fatalf("update at the storage version with the webhook down: %v", err)
	}
	if atStorage != 2 || atV1 != 1 {
		t.Errorf("events: %d at storage (want 2), %d at v1 (want 1: the v1 watch cannot convert)", atStorage, atV1)
	}
}

func TestConversionMetadataIsRestoredButLabelsAndAnnotations(t *testing.T) {
	s, gc := newGadgetSim()
	c := s.Client()
	mustCreate(t, c, newGadget())
	gc.mangle = func(out runtime.Object) {
		o := out.(client.Object)
		o.SetGeneration(42)
		o.SetResourceVersion("999")
		o.SetLabels(map[string]string{"added": "by-webhook"})
	}
	gc.install(s)
	g1 := getV1(t, c)
	if g1.Generation != 1 || g1.ResourceVersion == "999" || g1.Labels["added"] != "by-webhook" || g1.Labels["app"] != "" {
		t.Errorf("converted metadata %+v: want generation and resourceVersion restored, the webhook's labels kept", g1.ObjectMeta)
	}
	gc.mangle = func(out runtime.Object) { out.(client.Object).SetLabels(map[string]string{"bad key!": "x"}) }
	gc.install(s)
	if err := c.Get(context.Background(), gadgetKey, g1); !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "invalid metadata") {
		t.Errorf("invalid labels from the webhook: %v, want an InternalError about invalid metadata", err)
	}
	gc.mangle = func(out runtime.Object) { out.(client.Object).SetName("other") }
	gc.install(s)
	if err := c.Get(context.Background(), gadgetKey, g1); !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "must have the same name") {
		t.Errorf("renaming webhook: %v, want an InternalError", err)
	}
}

func TestConversionFieldIndexesPerVersion(t *testing.T) {
	s, _ := newGadgetSim()
	c := s.Client()
	ctx := context.Background()
	idx := s.FieldIndexer()
	if err := idx.IndexField(ctx, &gadgetV2{}, "spec.colour", func(o client.Object) []string { return []string{o.(*gadgetV2).Spec.Colour} }); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, newGadget())
	other := newGadget()
	other.Name, other.Spec.Color = "h", "blue"
	mustCreate(t, c, other)

	var l2 gadgetV2List
	if err := c.List(ctx, &l2, client.MatchingFields{"spec.colour": "blue"}); err != nil || len(l2.Items) != 1 || l2.Items[0].Name != "h" {
		t.Errorf("list v2 by the storage-version index: %v %d items", err, len(l2.Items))
	}
	if err := c.List(ctx, &gadgetV1List{}, client.MatchingFields{"spec.colour": "blue"}); !apierrors.IsBadRequest(err) {
		t.Errorf("list v1 by an index registered for v2: %v, want 400 (each version's cache has its own indexes)", err)
	}
	if err := idx.IndexField(ctx, &gadgetV1{}, "spec.color", func(o client.Object) []string { return []string{o.(*gadgetV1).Spec.Color} }); err != nil {
		t.Fatal(err)
	}
	var l1 gadgetV1List
	if err := c.List(ctx, &l1, client.MatchingFields{"spec.color": "red"}); err != nil || len(l1.Items) != 1 || l1.Items[0].Name != "g" {
		t.Errorf("list v1 by the v1 index: %v %+v", err, l1.Items)
	}
	if err := c.DeleteAllOf(ctx, &gadgetV1{}, client.InNamespace("ns"), client.MatchingFields{"spec.color": "red"}); err != nil {
		t.Fatalf("delete all v1 red: %v", err)
	}
	if err := c.List(ctx, &l2); err != nil || len(l2.Items) != 1 || l2.Items[0].Name != "h" {
		t.Errorf("after deleting the red gadget at v1: %v %d items", err, len(l2.Items))
	}
}

func TestHubConversionSpokeToHubAndBack(t *testing.T) {
	s, _ := newGadgetSim()
	conv := HubConversion(s.Scheme())
	in := newGadget()
	in.Annotations = map[string]string{gadgetTagsAnnotation: "x,y"}
	hub, err := conv(in, gadgetV2GV)
	if err != nil {
		t.Fatal(err)
	}
	h := hub.(*gadgetV2)
	if h.APIVersion != "toy.sim.dev/v2" || h.Kind != "Gadget" || strings.Join(h.Spec.Tags, ",") != "x,y" || h.Annotations != nil {
		t.Errorf("to hub: %+v", h)
	}
	back, err := conv(h, gadgetV1GV)
	if err != nil {
		t.Fatal(err)
	}
	if b := back.(*gadgetV1); b.Spec != in.Spec || b.Annotations[gadgetTagsAnnotation] != "x,y" {
		t.Errorf("round trip: %+v, want %+v", b, in)
	}
	if _, err := conv(&widget{}, gadgetV1GV); err == nil {
		t.Error("converting a kind that has no such version: want an error")
	}
}

func TestConversionOfAnUnchangedObjectIsReused(t *testing.T) {
	s, gc := newGadgetSim()
	c := s.Client()
	s.Subscribe(func(WatchEvent) {}, gadgetV1GV)
	mustCreate(t, c, newGadget()) // v1 → v2 to store, v2 → v1 for the answer (reused by the event)
	for range 5 {
		getV1(t, c)
		if err := c.List(context.Background(), &gadgetV1List{}); err != nil {
			t.Fatal(err)
		}
	}
	if gc.calls[gadgetV1GV] != 1 || gc.calls[gadgetV2GV] != 1 {
		t.Errorf("conversions %v: want one each way for one stored object read ten times", gc.calls)
	}
	g := getV1(t, c)
	g.Spec.Size = 4
	if err := c.Update(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	getV1(t, c)
	if gc.calls[gadgetV1GV] != 2 {
		t.Errorf("conversions to v1 after an update: %d, want 2 (the new object once)", gc.calls[gadgetV1GV])
	}
}
