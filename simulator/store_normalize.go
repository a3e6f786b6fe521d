package simulator

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// canonicalize returns a fresh typed copy of obj as the API server would
// store it: defaulted, TypeMeta set, and as a JSON round trip leaves it
// (timestamps at second precision, empty omitempty fields reset) and
// sharing nothing with obj. The copy is typed (canonicalCopy) where the
// kind's Go type is obj's and holds nothing it does not model, else it is
// the JSON round trip itself; with CheckSharedReads on, every typed copy
// is compared with the round trip and a disagreement panics.
func (st *store) canonicalize(gvk schema.GroupVersionKind, obj client.Object) (client.Object, error) {
	var out client.Object
	ok := false
	if t, known := st.s.scheme.AllKnownTypes()[gvk]; known && reflect.TypeOf(obj) == reflect.PointerTo(t) {
		out, ok = canonicalCopy(obj)
	}
	if !ok || st.s.shared.on {
		viaJSON, err := st.canonicalizeJSON(gvk, obj)
		if !ok {
			if err != nil {
				return nil, err
			}
			st.applyDefaults(viaJSON)
			return viaJSON, nil
		}
		out.GetObjectKind().SetGroupVersionKind(gvk)
		if err != nil || !reflect.DeepEqual(out, viaJSON) {
			panic(fmt.Sprintf("simulator: the typed canonical copy of %s %s differs from its JSON round trip (%v) at %s",
				gvk.Kind, objectName(obj), err, firstDifference(reflect.ValueOf(viaJSON), reflect.ValueOf(out), "")))
		}
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	st.applyDefaults(out)
	return out, nil
}

// canonicalStatus is the next stored version of cur after a /status
// update with obj (status set) at the storage version: what
// mergeForEndpoint would make of cur and a canonical candidate, built
// directly — a shallow copy of cur holding a canonical deep copy of obj's
// status and, for built-in kinds, a copy of obj's annotations (cur's own
// map when they hold the same entries, as they mostly do). Of a
// /status candidate the write takes only those, so nothing else of obj is
// copied or walked; the defaults the store applies concern spec alone.
// ok is false for any other write, or when obj is not its kind's Go type
// or holds something the typed copy does not model: the caller then
// canonicalises the whole object and merges. With CheckSharedReads on,
// the result is compared with the merge of canonicalize's whole copy and
// a difference panics.
func (st *store) canonicalStatus(gvk schema.GroupVersionKind, cur, obj client.Object, status bool) (client.Object, bool) {
	if !status || st.storageGVK(gvk) != gvk {
		return nil, false
	}
	if t, known := st.s.scheme.AllKnownTypes()[gvk]; !known || reflect.TypeOf(obj) != reflect.PointerTo(t) || reflect.TypeOf(cur) != reflect.TypeOf(obj) {
		return nil, false
	}
	next, sv, ok := withStatusOf(cur, obj)
	if !ok || !canonicalValue(sv) {
		return nil, false
	}
	if isBuiltin(cur) {
		ann := obj.GetAnnotations()
		for k, v := range ann {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return nil, false
			}
		}
		switch {
		case len(ann) == 0:
			next.SetAnnotations(nil)
		case sameStrings(ann, cur.GetAnnotations()):
			// next, a shallow copy of cur, already holds cur's map: the
			// same entries, stored and never changed in place, so shared
			// as the metadata and spec are instead of cloned.
		default:
			next.SetAnnotations(maps.Clone(ann))
		}
	}
	if st.s.shared.on {
		full, err := st.canonicalize(gvk, obj)
		if err != nil || !reflect.DeepEqual(structOf(full).FieldByName("Status").Interface(), sv.Interface()) {
			panic(fmt.Sprintf("simulator: the canonical status of %s %s differs from the whole object's canonical copy (%v) at %s",
				gvk.Kind, objectName(obj), err, firstDifference(structOf(full).FieldByName("Status"), sv, ".Status")))
		}
		if merged := mergeForEndpoint(cur, full, true); !reflect.DeepEqual(merged, next) {
			panic(fmt.Sprintf("simulator: the /status write of %s %s differs from the merge of its canonical copy at %s",
				gvk.Kind, objectName(obj), firstDifference(reflect.ValueOf(merged), reflect.ValueOf(next), "")))
		}
	}
	return next, true
}

// withStatusOf is a shallow copy of cur (sharing its metadata and spec,
// which no write changes in place) holding a deep copy of obj's status,
// and that status; obj and cur are of the same type. The kinds whose
// status the simulated controllers and kubelet write are copied directly,
// others through their status type's generated DeepCopy.
func withStatusOf(cur, obj client.Object) (client.Object, reflect.Value, bool) {
	switch o := obj.(type) {
	case *corev1.Pod:
		n := new(corev1.Pod)
		*n = *cur.(*corev1.Pod)
		o.Status.DeepCopyInto(&n.Status)
		return n, reflect.ValueOf(&n.Status).Elem(), true
	case *appsv1.ReplicaSet:
		n := new(appsv1.ReplicaSet)
		*n = *cur.(*appsv1.ReplicaSet)
		o.Status.DeepCopyInto(&n.Status)
		return n, reflect.ValueOf(&n.Status).Elem(), true
	case *appsv1.Deployment:
		n := new(appsv1.Deployment)
		*n = *cur.(*appsv1.Deployment)
		o.Status.DeepCopyInto(&n.Status)
		return n, reflect.ValueOf(&n.Status).Elem(), true
	}
	next := shallowCopy(cur)
	sv := structOf(next).FieldByName("Status")
	if !sv.IsValid() || !sv.CanAddr() {
		return nil, reflect.Value{}, false
	}
	dc := structOf(obj).FieldByName("Status").Addr().MethodByName("DeepCopy")
	if !dc.IsValid() || dc.Type().NumIn() != 0 || dc.Type().NumOut() != 1 || dc.Type().Out(0) != sv.Addr().Type() {
		return nil, reflect.Value{}, false
	}
	cp := dc.Call(nil)[0]
	if cp.IsNil() {
		return nil, reflect.Value{}, false
	}
	sv.Set(cp.Elem())
	return next, sv, true
}

// canonicalizeJSON is obj round-tripped through JSON into a fresh object
// of kind gvk, not defaulted.
func (st *store) canonicalizeJSON(gvk schema.GroupVersionKind, obj client.Object) (client.Object, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", gvk.Kind, objectName(obj), err)
	}
	return st.decode(gvk, data)
}

// applyDefaults runs the scheme's defaulting funcs and the built-in
// defaults the API server applies to every request body.
func (st *store) applyDefaults(o client.Object) {
	st.s.scheme.Default(o)
	applyBuiltinDefaults(o)
}

// decode builds a typed object of kind gvk from JSON.
func (st *store) decode(gvk schema.GroupVersionKind, data []byte) (client.Object, error) {
	ro, err := st.s.scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("kind %s: %w", gvk, err)
	}
	out, ok := ro.(client.Object)
	if !ok {
		return nil, fmt.Errorf("kind %s is not a client.Object", gvk)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("decode %s: %w", gvk.Kind, err)
	}
	out.GetObjectKind().SetGroupVersionKind(gvk)
	return out, nil
}

// sameContent reports whether the candidate next version of an object
// equals the stored one apart from resourceVersion: such a write is a no-op
// that keeps the old resourceVersion and sends no watch event, as on the
// real API server. It sets candidate's resourceVersion to cur's.
//
// statusOnly says the candidate is a copy of cur in which only status (and,
// for built-in kinds, annotations) were replaced — a /status write at the
// storage version (mergeForEndpoint) — so only those are compared: the
// same answer as comparing whole objects, without walking metadata and
// spec (most writes are status writes).
func sameContent(candidate, cur client.Object, statusOnly bool) bool {
	candidate.SetResourceVersion(cur.GetResourceVersion())
	if !statusOnly {
		return semanticEqual(candidate, cur)
	}
	if isBuiltin(cur) && !sameStrings(candidate.GetAnnotations(), cur.GetAnnotations()) {
		return false
	}
	// Compared through pointers (both objects are pointers, so their
	// fields are addressable): the same comparison without boxing a copy
	// of each status struct (a whole PodStatus per pod status write).
	return semanticEqual(structOf(candidate).FieldByName("Status").Addr().Interface(), structOf(cur).FieldByName("Status").Addr().Interface())
}

func objectName(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// structOf is the struct an object pointer points to.
func structOf(obj any) reflect.Value { return reflect.Indirect(reflect.ValueOf(obj)) }

// hasStatusSubresource: every built-in workload, and any type with a Status
// field, is served with a /status subresource.
func hasStatusSubresource(obj any) bool {
	v := structOf(obj)
	return v.Kind() == reflect.Struct && v.FieldByName("Status").IsValid()
}

func copyStatus(dst, src any) {
	structOf(dst).FieldByName("Status").Set(structOf(src).FieldByName("Status"))
}

// isBuiltin reports whether obj is a type of k8s.io/api (served by
// kube-apiserver itself rather than as a custom resource).
func isBuiltin(obj any) bool {
	return strings.HasPrefix(structOf(obj).Type().PkgPath(), "k8s.io/api/")
}

// contentChanged reports whether anything but metadata and status differs:
// the changes that bump metadata.generation (k8s.io/apiserver's generic
// registry strategies; Deployments also bump on annotation changes,
// pkg/registry/apps/deployment/strategy.go).
func contentChanged(a, b client.Object) bool {
	va, vb := structOf(a), structOf(b)
	t := va.Type()
	for i := 0; i < t.NumField(); i++ {
		switch t.Field(i).Name {
		case "TypeMeta", "ObjectMeta", "Status":
			continue
		}
		// Compared through pointers: the same comparison without boxing a
		// copy of each spec struct (a whole PodSpec per pod write).
		if !semanticEqual(va.Field(i).Addr().Interface(), vb.Field(i).Addr().Interface()) {
			return true
		}
	}
	if t.Name() == "Deployment" && isBuiltin(a) {
		return !sameStrings(a.GetAnnotations(), b.GetAnnotations())
	}
	return false
}

// sameStrings is equality.Semantic.DeepEqual for two string maps (labels,
// annotations): the same entries, a nil map equal to an empty one. It
// compares them directly instead of through reflection, which boxes every
// key and value it reads (about 1,000 allocations a demo run, one
// annotations comparison per built-in /status write).
func sameStrings(a, b map[string]string) bool {
	return maps.Equal(a, b)
}
