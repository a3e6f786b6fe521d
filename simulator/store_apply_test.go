package simulator

import (
	"context"
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// imageAC is an apply configuration of one container's image.
func imageAC(name, container, image string) *appsv1ac.DeploymentApplyConfiguration {
	return appsv1ac.Deployment(name, "ns").WithSpec(appsv1ac.DeploymentSpec().
		WithTemplate(corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName(container).WithImage(image)))))
}

// fieldsOf is the FieldsV1 JSON of manager's entry with operation op.
func fieldsOf(t *testing.T, d *appsv1.Deployment, manager, op string) string {
	t.Helper()
	for _, e := range d.ManagedFields {
		if e.Manager == manager && string(e.Operation) == op && e.FieldsV1 != nil {
			return string(e.FieldsV1.Raw)
		}
	}
	return ""
}

// The operator's apply (one container's image, force) takes exactly that
// field: the sidecar and the rest stay with their creator; another
// applier's un-forced apply of the same field is a 409 naming the owner;
// forced, it takes the field back (what kustomize-controller does).
func TestApplyOwnsOneContainerImage(t *testing.T) {
	ctx := context.Background()
	_, c := newTestSim()
	d := testDeployment("web")
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "proxy:v1"})
	if err := c.Create(ctx, d, client.FieldOwner("kubectl-create")); err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(ctx, imageAC("web", "app", "img:v2"), client.FieldOwner("upgrade-operator")); !apierrors.IsConflict(err) {
		t.Fatalf("un-forced apply of a field owned by the creator: got %v, want 409 Conflict", err)
	}
	ac := imageAC("web", "app", "img:v2")
	if err := c.Apply(ctx, ac, client.FieldOwner("upgrade-operator"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	if ac.Generation == nil || *ac.Generation != 2 {
		t.Errorf("generation after the image apply = %v, want 2 (returned in the apply configuration)", ac.Generation)
	}
	var got appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), &got); err != nil {
		t.Fatal(err)
	}
	if img := got.Spec.Template.Spec.Containers; img[0].Image != "img:v2" || img[1].Image != "proxy:v1" || got.Spec.Selector == nil {
		t.Fatalf("after apply: containers %v, selector %v", img, got.Spec.Selector)
	}
	want := `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`
	if f := fieldsOf(t, &got, "upgrade-operator", "Apply"); f != want {
		t.Errorf("upgrade-operator owns %s, want %s", f, want)
	}
	if f := fieldsOf(t, &got, "kubectl-create", "Update"); !strings.Contains(f, `"k:{\"name\":\"sidecar\"}"`) || strings.Contains(f, `"k:{\"name\":\"app\"}":{".":{},"f:image"`) {
		t.Errorf("creator's fields after the forced apply: %s (want the sidecar, not app's image)", f)
	}

	err := c.Apply(ctx, imageAC("web", "app", "img:v1"), client.FieldOwner("kustomize-controller"))
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "upgrade-operator") {
		t.Fatalf("un-forced apply of the operator's field: got %v, want a 409 naming upgrade-operator", err)
	}
	if err := c.Apply(ctx, imageAC("web", "app", "img:v1"), client.FieldOwner("kustomize-controller"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(d), &got); err != nil {
		t.Fatal(err)
	}
	// The operator keeps co-owning the list item and its key (name); the image is kustomize-controller's.
	if got.Spec.Template.Spec.Containers[0].Image != "img:v1" || strings.Contains(fieldsOf(t, &got, "upgrade-operator", "Apply"), "f:image") {
		t.Errorf("after kustomize-controller's forced apply: image %s, upgrade-operator still owns %q",
			got.Spec.Template.Spec.Containers[0].Image, fieldsOf(t, &got, "upgrade-operator", "Apply"))
	}
}

// A resourceVersion in the apply configuration is an optimistic lock; an
// apply that changes nothing keeps the resourceVersion; a missing field
// manager is refused.
func TestApplyLockNoOpAndManagerRequired(t *testing.T) {
	ctx := context.Background()
	_, c := newTestSim()
	d := testDeployment("web")
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(ctx, imageAC("web", "app", "img:v2").WithResourceVersion("999")); !apierrors.IsBadRequest(err) {
		t.Fatalf("apply without field manager: got %v, want 400", err)
	}
	stale := imageAC("web", "app", "img:v2").WithResourceVersion("999")
	if err := c.Apply(ctx, stale, client.FieldOwner("m"), client.ForceOwnership); !apierrors.IsConflict(err) {
		t.Fatalf("stale resourceVersion: got %v, want 409", err)
	}
	ok := imageAC("web", "app", "img:v2").WithResourceVersion(d.ResourceVersion)
	if err := c.Apply(ctx, ok, client.FieldOwner("m"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	again := imageAC("web", "app", "img:v2")
	if err := c.Apply(ctx, again, client.FieldOwner("m"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	if *again.ResourceVersion != *ok.ResourceVersion {
		t.Errorf("no-op apply moved resourceVersion %s → %s", *ok.ResourceVersion, *again.ResourceVersion)
	}
	if err := c.Apply(ctx, imageAC("missing", "app", "x"), client.FieldOwner("m")); !apierrors.IsNotFound(err) {
		t.Errorf("apply to a missing Deployment: got %v, want 404 (apply-create is not modelled)", err)
	}
	raw, _ := json.Marshal(imageAC("web", "app", "x"))
	if !strings.Contains(string(raw), `"kind":"Deployment"`) {
		t.Fatalf("apply configuration carries no kind: %s", raw)
	}
}

// TestApplyBodyDecodesAsTheAPIServerDoes: a body as encoding/json writes
// it (random values of every JSON kind re-encoded compactly: strings with
// quotes, escapes, HTML characters and line separators) takes the JSON
// path and decodes as sigs.k8s.io/yaml.Unmarshal, which the API server
// uses, decodes it; a body with white space, or a YAML body, takes the
// YAML path and gives sigs.k8s.io/yaml's answer, error included (a key
// and its colon on two lines is valid JSON that the API server refuses).
// decodeApply also panics on a disagreement with CheckSharedReads on.
func TestApplyBodyDecodesAsTheAPIServerDoes(t *testing.T) {
	const seed = 17
	r := rand.New(rand.NewSource(seed))
	st := &store{s: &Sim{}}
	fast := 0
	for i := 0; i < 3000; i++ {
		body := []byte(randomJSONObject(r, 3))
		if i%2 == 0 { // as encoding/json writes it
			var v any
			if err := json.Unmarshal(body, &v); err != nil {
				t.Fatalf("seed %d, body %d: %v", seed, i, err)
			}
			body, _ = json.Marshal(v)
		}
		if compactJSONObject(body) {
			fast++
		}
		var got, want map[string]any
		gotErr := st.decodeApply(body, &got)
		wantErr := yaml.Unmarshal(body, &want)
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d, body %d %q: decoded %#v (%v), sigs.k8s.io/yaml %#v (%v) (replay: go test ./simulator -run TestApplyBodyDecodesAsTheAPIServerDoes)",
				seed, i, body, got, gotErr, want, wantErr)
		}
	}
	if fast < 1500 {
		t.Fatalf("only %d of 3000 bodies took the JSON path, want every compact one (1500)", fast)
	}
	var got map[string]any
	if err := st.decodeApply([]byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 3\n"), &got); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"replicas": float64(3)}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("YAML body decoded as %#v, want %#v", got, want)
	}
	if err := st.decodeApply([]byte("{\"k\"\n:1}"), &got); err == nil {
		t.Fatal("a key and its colon on two lines was accepted; the API server's YAML decoding refuses it")
	}
}
