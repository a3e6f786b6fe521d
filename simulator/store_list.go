package simulator

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldIndexer registers field indexes for List with client.MatchingFields,
// like a manager's cache: mgr.GetFieldIndexer().IndexField(...).
func (s *Sim) FieldIndexer() client.FieldIndexer { return fieldIndexer{st: s.store} }

type fieldIndexer struct{ st *store }

// IndexField registers extract as the values of field for obj's kind. As
// with controller-runtime's cache, registering a field twice is an error.
func (f fieldIndexer) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	gvk, err := f.st.gvkFor(obj)
	if err != nil {
		return err
	}
	m := f.st.indexes[gvk]
	if m == nil {
		m = map[string]client.IndexerFunc{}
		f.st.indexes[gvk] = m
	}
	if _, dup := m[field]; dup {
		return fmt.Errorf("index %q for %s is already registered", field, gvk.Kind)
	}
	m[field] = extract
	return nil
}

// selectObjects returns the stored objects of a kind, at version gvk, that
// match the list options' namespace, label selector and field selector
// (indexes registered for version gvk), in key order — as a cache of that
// version answers. A failed conversion fails the list.
func (st *store) selectObjects(gvk schema.GroupVersionKind, lo *client.ListOptions) ([]client.Object, error) {
	return st.selectObjectsInto(nil, gvk, lo)
}

// selectObjectsInto is selectObjects appending to out.
func (st *store) selectObjectsInto(out []client.Object, gvk schema.GroupVersionKind, lo *client.ListOptions) ([]client.Object, error) {
	sgvk := st.storageGVK(gvk)
	var reqs fields.Requirements // the field selector's terms, taken once per list
	if lo.FieldSelector != nil && !lo.FieldSelector.Empty() {
		reqs = lo.FieldSelector.Requirements()
	}
	for _, o := range st.list(sgvk) {
		if lo.Namespace != "" && o.GetNamespace() != lo.Namespace {
			continue
		}
		o, err := st.convert(o, sgvk, gvk)
		if err != nil {
			return nil, err
		}
		if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labels.Set(o.GetLabels())) {
			continue
		}
		ok, err := st.fieldsMatch(gvk, o, lo.FieldSelector, reqs)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, o)
		}
	}
	return out, nil
}

// fieldsMatch reports whether o matches the field selector sel, whose
// terms are reqs (sel.Requirements(); none for an empty selector).
func (st *store) fieldsMatch(gvk schema.GroupVersionKind, o client.Object, sel fields.Selector, reqs fields.Requirements) (bool, error) {
	for _, req := range reqs {
		vals, err := st.fieldValues(gvk, o, req.Field)
		if err != nil {
			return false, err
		}
		found := slices.Contains(vals, req.Value)
		switch req.Operator {
		case selection.Equals, selection.DoubleEquals:
			if !found {
				return false, nil
			}
		case selection.NotEquals:
			if found {
				return false, nil
			}
		default:
			return false, apierrors.NewBadRequest(fmt.Sprintf("field selector %q: operator %s is not supported", sel, req.Operator))
		}
	}
	return true, nil
}

// fieldValues resolves a field selector key: metadata.name and
// metadata.namespace for every kind, spec.nodeName and status.phase for
// pods (as kube-apiserver's pod field selectors), else a registered index.
func (st *store) fieldValues(gvk schema.GroupVersionKind, o client.Object, field string) ([]string, error) {
	switch field {
	case "metadata.name":
		return []string{o.GetName()}, nil
	case "metadata.namespace":
		return []string{o.GetNamespace()}, nil
	}
	if extract, ok := st.indexes[gvk][field]; ok {
		return st.indexValues(gvk, o, field, extract), nil
	}
	if pod, ok := o.(*corev1.Pod); ok {
		switch field {
		case "spec.nodeName":
			return []string{pod.Spec.NodeName}, nil
		case "status.phase":
			return []string{string(pod.Status.Phase)}, nil
		}
	}
	return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported for %s: %s (register an index with Sim.FieldIndexer)", gvk.Kind, field))
}

// indexedKey is an object (stored, or a conversion of a stored one) and
// a registered index field.
type indexedKey struct {
	obj   client.Object
	field string
}

// indexValues is extract(o), kept until the next commit of o's kind: a
// stored object never changes (a write replaces it), nor does a
// conversion of one, as an informer's indexer computes an object's index
// values once, when the object arrives.
func (st *store) indexValues(gvk schema.GroupVersionKind, o client.Object, field string, extract client.IndexerFunc) []string {
	m := st.indexed[gvk.GroupKind()]
	if m == nil {
		m = map[indexedKey][]string{}
		st.indexed[gvk.GroupKind()] = m
	}
	k := indexedKey{obj: o, field: field}
	if vals, ok := m[k]; ok {
		return vals
	}
	vals := extract(o)
	m[k] = vals
	return vals
}
