package simulator

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// ConvertFunc converts obj, a typed object of one served version of a kind
// (a copy the function may modify), to version to of the same group and
// kind, as a CRD's conversion webhook does. It returns a typed object (or
// *unstructured.Unstructured) of that version; only its labels and
// annotations may differ in metadata — the rest is restored from obj, as
// the API server restores it. An error fails the API call that needed
// the conversion.
type ConvertFunc func(obj runtime.Object, to schema.GroupVersion) (runtime.Object, error)

// kindConversion is a multi-version kind: stored at one version, served at
// every version of its group the scheme knows.
type kindConversion struct {
	storage string
	convert ConvertFunc
	// memo holds the last two conversions (a watch event converts the new
	// and the old object) of each stored object to each served version:
	// stored objects are immutable snapshots, so a conversion of the same
	// pointer is reused (as an informer holds one converted copy) instead
	// of calling convert on every read.
	memo map[memoKey]*memoEntry
}

type memoKey struct {
	to  schema.GroupVersionKind
	key client.ObjectKey
}

type memoEntry struct{ src, out [2]client.Object }

func (m *memoEntry) lookup(src client.Object) client.Object {
	for i := range m.src {
		if m.src[i] == src {
			return m.out[i]
		}
	}
	return nil
}

func (m *memoEntry) add(src, out client.Object) {
	m.src[1], m.out[1] = m.src[0], m.out[0]
	m.src[0], m.out[0] = src, out
}

// SetConversion makes gk a multi-version kind, as a CustomResourceDefinition
// with several served versions and a conversion webhook
// (k8s.io/apiextensions-apiserver/pkg/apiserver/conversion): objects are
// stored once, at version storage; creates, updates and patches at any
// other version are converted to storage before they are stored (status
// reset, endpoint merge and patching happen at the request's version, as in
// the CRD handler; generation bumps on changes outside metadata and status
// of the storage version); gets, lists, watch events to subscribers and
// controllers are converted from storage to the version asked for. A
// failing convert is an InternalError "conversion webhook for <gvk>
// failed: ..." of the call that needed it. The storage version must be in
// the scheme.
//
// convert must be a function of its input: the result of converting a
// stored object is reused until the object changes. To change the
// converter's behaviour mid-run (a webhook that goes down, a new release),
// call SetConversion again with the same storage version: that forgets
// every earlier result. Changing the storage version of a kind that has
// objects panics (the simulator does not migrate storage).
func (s *Sim) SetConversion(gk schema.GroupKind, storage string, convert ConvertFunc) {
	sgvk := gk.WithVersion(storage)
	if !s.scheme.Recognizes(sgvk) {
		panic(fmt.Sprintf("simulator: SetConversion: storage version %s is not in the scheme", sgvk))
	}
	for gvk, objs := range s.store.kinds {
		if gvk.GroupKind() == gk && gvk != sgvk && len(objs) > 0 {
			panic(fmt.Sprintf("simulator: SetConversion: %s has objects stored at %s, not %s", gk, gvk.Version, storage))
		}
	}
	s.store.conversions[gk] = &kindConversion{storage: storage, convert: convert, memo: map[memoKey]*memoEntry{}}
}

// storageGVK is the version objects of gvk's kind are stored at.
func (st *store) storageGVK(gvk schema.GroupVersionKind) schema.GroupVersionKind {
	if len(st.conversions) == 0 {
		return gvk
	}
	if c := st.conversions[gvk.GroupKind()]; c != nil {
		gvk.Version = c.storage
	}
	return gvk
}

// convert returns obj (of version from) at version to: obj itself when the
// versions are equal, else an object from the kind's ConvertFunc, checked
// and with its metadata restored as the apiextensions-apiserver's webhook
// converter does (validateConvertedObject, restoreObjectMeta). The result
// of converting from the storage version may be shared (memo): callers
// must not modify it.
func (st *store) convert(obj client.Object, from, to schema.GroupVersionKind) (client.Object, error) {
	if from == to {
		return obj, nil
	}
	c := st.conversions[from.GroupKind()]
	if c == nil || from.GroupKind() != to.GroupKind() {
		return nil, fmt.Errorf("simulator: no conversion from %s to %s", from, to)
	}
	if from.Version != c.storage {
		return st.callConvert(c, obj, from, to)
	}
	mk := memoKey{to: to, key: client.ObjectKeyFromObject(obj)}
	m := c.memo[mk]
	if m == nil {
		m = &memoEntry{}
		c.memo[mk] = m
	}
	if out := m.lookup(obj); out != nil {
		return out, nil
	}
	out, err := st.callConvert(c, obj, from, to)
	if err == nil {
		m.add(obj, out)
	}
	return out, err
}

// callConvert runs the kind's ConvertFunc on a copy of obj and checks it.
func (st *store) callConvert(c *kindConversion, obj client.Object, from, to schema.GroupVersionKind) (client.Object, error) {
	in := obj.DeepCopyObject().(client.Object)
	in.GetObjectKind().SetGroupVersionKind(from)
	ro, err := c.convert(in, to.GroupVersion())
	if err != nil {
		return nil, conversionFailed(from, "failed: %v", err)
	}
	out, err := st.typedConverted(ro)
	if err != nil {
		return nil, conversionFailed(from, "returned an invalid object: %v", err)
	}
	if got, err := apiutil.GVKForObject(out, st.s.scheme); err != nil || got != to {
		return nil, conversionFailed(from, "returned an invalid object: invalid groupVersion (expected %v, received %v)", to.GroupVersion(), got.GroupVersion())
	}
	if err := validateConverted(obj, out); err != nil {
		return nil, conversionFailed(from, "returned an invalid object: %v", err)
	}
	if err := restoreObjectMeta(obj, out); err != nil {
		return nil, conversionFailed(from, "returned invalid metadata: %v", err)
	}
	out.GetObjectKind().SetGroupVersionKind(to)
	return out, nil
}

// conversionFailed is the API error of a failed conversion: a 500, as the
// CRD handler answers when its webhook fails.
func conversionFailed(from schema.GroupVersionKind, format string, args ...any) error {
	return apierrors.NewInternalError(fmt.Errorf("conversion webhook for %s "+format, append([]any{from}, args...)...))
}

// typedConverted is a converter's result as a typed client.Object.
func (st *store) typedConverted(ro runtime.Object) (client.Object, error) {
	if u, ok := ro.(*unstructured.Unstructured); ok {
		typed, err := st.s.scheme.New(u.GroupVersionKind())
		if err != nil {
			return nil, err
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return nil, err
		}
		ro = typed
	}
	o, ok := ro.(client.Object)
	if !ok || ro == nil || reflect.ValueOf(ro).IsNil() {
		return nil, fmt.Errorf("%T is not an object", ro)
	}
	return o, nil
}

// validateConverted: name, namespace and uid must survive conversion.
func validateConverted(in, out client.Object) error {
	switch {
	case in.GetName() != out.GetName():
		return fmt.Errorf("must have the same name: %v != %v", in.GetName(), out.GetName())
	case in.GetNamespace() != out.GetNamespace():
		return fmt.Errorf("must have the same namespace: %v != %v", in.GetNamespace(), out.GetNamespace())
	case in.GetUID() != out.GetUID():
		return fmt.Errorf("must have the same UID: %v != %v", in.GetUID(), out.GetUID())
	}
	return nil
}

// restoreObjectMeta puts original's metadata onto converted, keeping only
// converted's labels and annotations, which must be valid when changed.
func restoreObjectMeta(original, converted client.Object) error {
	labels, annotations := converted.GetLabels(), converted.GetAnnotations()
	if !equality.Semantic.DeepEqual(labels, original.GetLabels()) {
		if errs := metav1validation.ValidateLabels(labels, field.NewPath("metadata", "labels")); len(errs) > 0 {
			return errs.ToAggregate()
		}
	}
	if !equality.Semantic.DeepEqual(annotations, original.GetAnnotations()) {
		if errs := apivalidation.ValidateAnnotations(annotations, field.NewPath("metadata", "annotations")); len(errs) > 0 {
			return errs.ToAggregate()
		}
	}
	dst, src := structOf(converted).FieldByName("ObjectMeta"), structOf(original).FieldByName("ObjectMeta")
	if !dst.IsValid() || !src.IsValid() || dst.Type() != src.Type() {
		return fmt.Errorf("%T has no ObjectMeta", converted)
	}
	dst.Set(reflect.ValueOf(original.DeepCopyObject()).Elem().FieldByName("ObjectMeta"))
	converted.SetLabels(labels)
	converted.SetAnnotations(annotations)
	return nil
}

// toStorage converts a request object (version gvk) to the storage
// version sgvk and canonicalises it as it would be stored (JSON round trip,
// storage-version defaults). Without conversion it returns o itself.
func (st *store) toStorage(o client.Object, gvk, sgvk schema.GroupVersionKind) (client.Object, error) {
	if gvk == sgvk {
		return o, nil
	}
	s, err := st.convert(o, gvk, sgvk)
	if err != nil {
		return nil, err
	}
	return st.canonicalize(sgvk, s)
}

// getAt returns the stored object key of gvk's kind at version gvk, or nil.
func (st *store) getAt(gvk schema.GroupVersionKind, key client.ObjectKey) (client.Object, error) {
	sgvk := st.storageGVK(gvk)
	cur := st.get(sgvk, key)
	if cur == nil {
		return nil, nil
	}
	return st.convert(cur, sgvk, gvk)
}

// forgetConversions drops the memoised conversions of a deleted object.
func (st *store) forgetConversions(gvk schema.GroupVersionKind, key client.ObjectKey) {
	c := st.conversions[gvk.GroupKind()]
	if c == nil {
		return
	}
	for _, gv := range st.s.scheme.VersionsForGroupKind(gvk.GroupKind()) {
		delete(c.memo, memoKey{to: gv.WithKind(gvk.Kind), key: key})
	}
}
