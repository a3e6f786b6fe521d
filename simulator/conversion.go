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
// the scheme. Call it before any object of gk exists; it panics otherwise.
func (s *Sim) SetConversion(gk schema.GroupKind, storage string, convert ConvertFunc) {
	sgvk := gk.WithVersion(storage)
	if !s.scheme.Recognizes(sgvk) {
		panic(fmt.Sprintf("simulator: SetConversion: storage version %s is not in the scheme", sgvk))
	}
	for gvk, objs := range s.store.kinds {
		if gvk.GroupKind() == gk && len(objs) > 0 {
			panic(fmt.Sprintf("simulator: SetConversion for %s after objects of it were stored", gk))
		}
	}
	s.store.conversions[gk] = &kindConversion{storage: storage, convert: convert}
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
// versions are equal, else a fresh object from the kind's ConvertFunc,
// checked and with its metadata restored as the apiextensions-apiserver's
// webhook converter does (validateConvertedObject, restoreObjectMeta).
func (st *store) convert(obj client.Object, from, to schema.GroupVersionKind) (client.Object, error) {
	if from == to {
		return obj, nil
	}
	c := st.conversions[from.GroupKind()]
	if c == nil || from.GroupKind() != to.GroupKind() {
		return nil, fmt.Errorf("simulator: no conversion from %s to %s", from, to)
	}
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
