package simulator

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/randfill"
)

// canonicalFiller fills objects at random, with the values a round trip
// changes made likely: sub-second times, zero times behind pointers, empty
// non-nil slices and maps, quantities in non-canonical forms.
func canonicalFiller(seed int64) *randfill.Filler {
	return randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).Funcs(
		func(t *metav1.Time, c randfill.Continue) {
			if c.Intn(4) == 0 {
				*t = metav1.Time{}
				return
			}
			*t = metav1.NewTime(time.Unix(c.Int63n(4e9), c.Int63n(1e9)))
		},
		func(t *metav1.MicroTime, c randfill.Continue) {
			if c.Intn(4) == 0 {
				*t = metav1.MicroTime{}
				return
			}
			*t = metav1.NewMicroTime(time.Unix(c.Int63n(4e9), c.Int63n(1e9)))
		},
		func(q *resource.Quantity, c randfill.Continue) {
			forms := []string{"100m", "0.5", "1Gi", "1024Mi", "2e3", "1.50", "0"}
			*q = resource.MustParse(forms[c.Intn(len(forms))])
		},
		func(v *intstr.IntOrString, c randfill.Continue) {
			switch c.Intn(3) {
			case 0:
				*v = intstr.FromInt32(c.Int31n(10))
			case 1:
				*v = intstr.FromString("25%")
			default: // not as its encoding gives it back: the other half set
				*v = intstr.IntOrString{Type: intstr.Int, IntVal: 3, StrVal: "3"}
			}
		},
		func(r *runtime.RawExtension, c randfill.Continue) { *r = runtime.RawExtension{} },
		func(f *metav1.FieldsV1, c randfill.Continue) {
			raws := []string{"", `{"f:spec": {"f:replicas": {}}}`, `{"f:spec":{"f:replicas":{}}}`,
				`{"f:metadata":{"f:labels":{"f:a<b":{}}}}`, `{"k:{\"name\":\"c\"}":{".":{}}}`}
			if r := raws[c.Intn(len(raws))]; r != "" {
				f.Raw = []byte(r)
			}
		},
		func(s *[]string, c randfill.Continue) {
			n := c.Intn(3)
			*s = []string{}
			for range n {
				*s = append(*s, c.String(5))
			}
		},
		func(m *map[string]string, c randfill.Continue) {
			*m = map[string]string{}
			for range c.Intn(3) {
				(*m)[c.String(4)] = c.String(4)
			}
		},
	)
}

// TestCanonicalCopyMatchesJSONRoundTrip: over random objects of the kinds
// the simulator stores, the typed canonical copy is exactly (reflect.DeepEqual)
// what the JSON round trip gives, and the copy shares nothing with its input.
func TestCanonicalCopyMatchesJSONRoundTrip(t *testing.T) {
	s := New(Options{Seed: 1})
	kinds := []client.Object{
		&corev1.Pod{}, &appsv1.ReplicaSet{}, &appsv1.Deployment{}, &appsv1.StatefulSet{},
		&appsv1.DaemonSet{}, &appsv1.ControllerRevision{}, &corev1.Namespace{}, &corev1.Node{},
		&corev1.ResourceQuota{}, &corev1.ConfigMap{}, &corev1.Service{}, &corev1.Event{},
	}
	for _, proto := range kinds {
		gvk, err := s.store.gvkFor(proto)
		if err != nil {
			t.Fatal(err)
		}
		for seed := int64(0); seed < 60; seed++ {
			obj := proto.DeepCopyObject().(client.Object)
			canonicalFiller(seed).Fill(obj)
			before := obj.DeepCopyObject()
			typed, ok := canonicalCopy(obj)
			if !ok {
				t.Fatalf("%s seed %d: the typed canonical copy declined a fuzzed object", gvk.Kind, seed)
			}
			typed.GetObjectKind().SetGroupVersionKind(gvk)
			viaJSON, err := s.store.canonicalizeJSON(gvk, obj)
			if err != nil {
				t.Fatalf("%s seed %d: %v", gvk.Kind, seed, err)
			}
			if !reflect.DeepEqual(typed, viaJSON) {
				t.Fatalf("%s seed %d: typed copy differs from the JSON round trip at %s", gvk.Kind, seed,
					firstDifference(reflect.ValueOf(viaJSON), reflect.ValueOf(typed), ""))
			}
			if !reflect.DeepEqual(obj, before) {
				t.Fatalf("%s seed %d: canonicalCopy changed its input", gvk.Kind, seed)
			}
		}
	}
}

// TestCanonicalCopyNormalises pins the round trip's effects one by one.
func TestCanonicalCopyNormalises(t *testing.T) {
	sub := metav1.NewTime(time.Unix(100, 7e8))
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: sub, DeletionTimestamp: &metav1.Time{},
			Labels: map[string]string{}, Finalizers: []string{}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Args: []string{},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.5")}}}}},
	}
	out, ok := canonicalCopy(p)
	if !ok {
		t.Fatal("declined a plain pod")
	}
	c := out.(*corev1.Pod)
	if !c.CreationTimestamp.Equal(&metav1.Time{Time: time.Unix(100, 0)}) || c.DeletionTimestamp != nil {
		t.Errorf("times: creation %v, deletion %v; want second precision and a zero pointer time dropped", c.CreationTimestamp, c.DeletionTimestamp)
	}
	if c.Labels != nil || c.Finalizers != nil || c.Spec.Containers[0].Args != nil {
		t.Errorf("empty omitempty map/slices kept: %v %v %v", c.Labels, c.Finalizers, c.Spec.Containers[0].Args)
	}
	if q := c.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]; q.String() != "500m" {
		t.Errorf("quantity %s, want 500m", q.String())
	}
	bad := p.DeepCopy()
	bad.Name = "bad-\xff"
	if _, ok := canonicalCopy(bad); ok {
		t.Error("accepted a string that is not UTF-8 (JSON would change it)")
	}
	if !strings.HasPrefix(p.Name, "p") || p.DeletionTimestamp == nil {
		t.Error("changed its input")
	}
}

// TestMergePatchTyped: a merge patch applied to the typed object gives
// what the JSON path gives — null resets a field and deletes a map entry,
// an object patches a struct behind a nil pointer, an array replaces —
// and a key naming no field is left to the JSON path.
func TestMergePatchTyped(t *testing.T) {
	s := New(Options{Seed: 1})
	gvk := appsv1.SchemeGroupVersion.WithKind("Deployment")
	cur := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Labels: map[string]string{"a": "1", "b": "2"}},
		Spec: appsv1.DeploymentSpec{Paused: true, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "i:1"}}}}},
		Status: appsv1.DeploymentStatus{Replicas: 3, Conditions: []appsv1.DeploymentCondition{{Type: "Available", Status: "True"}}},
	}
	cur.SetGroupVersionKind(gvk)
	cur = roundTrip(t, s, gvk, cur).(*appsv1.Deployment)
	for _, patch := range []string{
		`{"metadata":{"labels":{"a":null,"c":"3"},"resourceVersion":"7"}}`,
		`{"spec":{"paused":null,"replicas":2,"strategy":{"rollingUpdate":{"maxSurge":"50%","maxUnavailable":null}}}}`,
		`{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i:2"}]}}}}`,
		`{"status":{"conditions":null,"replicas":0,"observedGeneration":9007199254740993}}`,
		`{"metadata":{"annotations":{"x":null}},"status":{"conditions":[]}}`,
	} {
		typed, ok := mergePatchTyped(cur, []byte(patch))
		if !ok {
			t.Fatalf("patch %s: declined", patch)
		}
		typed.GetObjectKind().SetGroupVersionKind(gvk)
		doc, err := json.Marshal(cur)
		if err != nil {
			t.Fatal(err)
		}
		merged, err := jsonpatch.MergePatch(doc, []byte(patch))
		if err != nil {
			t.Fatal(err)
		}
		viaJSON, err := s.store.decode(gvk, merged)
		if err != nil {
			t.Fatal(err)
		}
		if d := firstDifference(reflect.ValueOf(viaJSON), reflect.ValueOf(typed), ""); d != "" {
			t.Errorf("patch %s: typed differs from JSON at %s", patch, d)
		}
	}
	if _, ok := mergePatchTyped(cur, []byte(`{"spec":{"Paused":false}}`)); ok {
		t.Error("accepted a key that names no field exactly (the JSON decoder matches it case-insensitively)")
	}
	if cur.Labels["a"] != "1" || !cur.Spec.Paused {
		t.Error("mergePatchTyped changed its input")
	}
}

func roundTrip(t *testing.T, s *Sim, gvk schema.GroupVersionKind, obj client.Object) client.Object {
	t.Helper()
	out, err := s.store.canonicalizeJSON(gvk, obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
