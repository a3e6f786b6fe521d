package simulator

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Client is a controller-runtime client over the simulator's store: reads
// are always fresh (no informer lag), writes commit at the current virtual
// time and notify subscribers before returning. Objects returned are deep
// copies with TypeMeta set, except Get and List with
// client.UnsafeDisableDeepCopy, which share the stored objects as
// controller-runtime's cache does
// (read-only; checked with CheckSharedReads). Watch returns an error: use AddController or
// Subscribe. Server-side apply is modelled for Deployments (store_apply.go).
func (s *Sim) Client() client.WithWatch { return s.clientFor("client") }

// ClientFor returns a client like Client whose calls carry name in
// APIRequest.Client, so fault injection can target one component (an
// operator replica, an actor editing objects). The same name gives the
// same client; the models' names are listed on APIRequest.
func (s *Sim) ClientFor(name string) client.WithWatch { return s.clientFor(name) }

// clientFor returns the client a component uses; the name shows in
// APIRequest so fault injection can target one component.
func (s *Sim) clientFor(name string) *simClient {
	c := s.clients[name]
	if c == nil {
		c = &simClient{s: s, name: name}
		s.clients[name] = c
	}
	return c
}

type simClient struct {
	s    *Sim
	name string
}

var _ client.WithWatch = (*simClient)(nil)

func (c *simClient) Scheme() *runtime.Scheme { return c.s.scheme }

func (c *simClient) RESTMapper() meta.RESTMapper { return c.s.restMapper() }

func (c *simClient) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return c.s.store.gvkFor(obj)
}

func (c *simClient) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	gvk, err := c.s.store.gvkFor(obj)
	if err != nil {
		return false, err
	}
	return c.s.store.namespaced(gvk), nil
}

func (c *simClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	gvk, err := c.s.store.gvkFor(obj)
	if err != nil {
		return err
	}
	if err := c.intercept("get", gvk, key.Namespace, key.Name, ""); err != nil {
		return err
	}
	cur, err := c.s.store.getAt(gvk, key)
	if err != nil {
		return err
	}
	if cur == nil {
		return notFound(gvk, key.Name)
	}
	if unsafeGet(opts) {
		// As controller-runtime's cache reader: obj becomes a shallow
		// copy of the cache's object, sharing every map, slice and
		// pointer; the caller must not change them (CheckSharedReads).
		if dv, sv := reflect.ValueOf(obj), reflect.ValueOf(cur); dv.Type() == sv.Type() {
			c.s.shared.handOut(c.name, cur)
			dv.Elem().Set(sv.Elem())
			return nil
		}
	}
	return assign(obj, cur)
}

func (c *simClient) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	gvk, err := c.s.store.listItemGVK(list)
	if err != nil {
		return err
	}
	lo := listOptions(opts)
	if err := c.intercept("list", gvk, lo.Namespace, "", ""); err != nil {
		return err
	}
	st := c.s.store
	objs, err := st.selectObjectsInto(st.listScratch[:0], gvk, lo)
	// fillList copies the objects into the list's items (shallow or deep
	// copies, never the slice itself), so the selection's slice is reused.
	defer func() { clear(objs); st.listScratch = objs[:0] }()
	if err != nil {
		return err
	}
	if ptr.Deref(lo.UnsafeDisableDeepCopy, false) {
		// As controller-runtime's cache reader: the items are the cache's
		// objects, not copies (the typed list holds shallow copies of them,
		// sharing every map, slice and pointer); the caller must not change them.
		c.s.shared.handOut(c.name, objs...)
		return fillList(list, gvk, objs, st.rvString(), false)
	}
	return fillList(list, gvk, objs, st.rvString(), true)
}

// unsafeGet is (&client.GetOptions{}).ApplyOptions(opts)'s
// UnsafeDisableDeepCopy, read directly when there are no options or only
// an UnsafeDisableDeepCopyOption (what the operator's Gets pass): no
// GetOptions and no *bool are made for it (two allocations a Get).
func unsafeGet(opts []client.GetOption) bool {
	switch len(opts) {
	case 0:
		return false
	case 1:
		if d, ok := opts[0].(client.UnsafeDisableDeepCopyOption); ok {
			return bool(d)
		}
	}
	return ptr.Deref((&client.GetOptions{}).ApplyOptions(opts).UnsafeDisableDeepCopy, false)
}

// listOptions is what (&client.ListOptions{}).ApplyOptions(opts) makes,
// read only: a single *client.ListOptions (what the operator's lists pass)
// is itself, without a copy.
func listOptions(opts []client.ListOption) *client.ListOptions {
	if len(opts) == 1 {
		if lo, ok := opts[0].(*client.ListOptions); ok && lo != nil {
			return lo
		}
	}
	return (&client.ListOptions{}).ApplyOptions(opts)
}

func (c *simClient) Watch(_ context.Context, list client.ObjectList, _ ...client.ListOption) (watch.Interface, error) {
	return nil, fmt.Errorf("watch of %T is not supported by the simulator: use Sim.AddController or Sim.Subscribe", list)
}

// assign copies a stored object into the caller's object, which may be the
// same typed struct or *unstructured.Unstructured.
func assign(dst, src client.Object) error {
	if deepCopyInto(dst, src) {
		return nil
	}
	cp := src.DeepCopyObject()
	if u, ok := dst.(*unstructured.Unstructured); ok {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cp)
		if err != nil {
			return fmt.Errorf("convert %s to unstructured: %w", objectName(src), err)
		}
		u.SetUnstructuredContent(m)
		return nil
	}
	dv := reflect.ValueOf(dst)
	sv := reflect.ValueOf(cp)
	if dv.Type() != sv.Type() {
		return fmt.Errorf("cannot store %T into %T", cp, dst)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}

// deepCopyInto deep-copies src into dst for the kinds written most
// (the generated DeepCopyInto: the copy DeepCopyObject makes, without
// allocating it apart first); false for other kinds and mismatched types.
func deepCopyInto(dst, src client.Object) bool {
	switch s := src.(type) {
	case *corev1.Pod:
		if d, ok := dst.(*corev1.Pod); ok {
			s.DeepCopyInto(d)
			return true
		}
	case *appsv1.ReplicaSet:
		if d, ok := dst.(*appsv1.ReplicaSet); ok {
			s.DeepCopyInto(d)
			return true
		}
	case *appsv1.Deployment:
		if d, ok := dst.(*appsv1.Deployment); ok {
			s.DeepCopyInto(d)
			return true
		}
	}
	return false
}

// fillList sets the items of a typed or unstructured list: deep copies of
// objs, or with deepCopy false the objects themselves (a typed list then
// holds shallow copies).
func fillList(list client.ObjectList, gvk schema.GroupVersionKind, objs []client.Object, rv string, deepCopy bool) error {
	if ul, ok := list.(*unstructured.UnstructuredList); ok {
		ul.Items = ul.Items[:0]
		for _, o := range objs {
			it := runtime.Object(o)
			if deepCopy {
				it = o.DeepCopyObject()
			}
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(it)
			if err != nil {
				return fmt.Errorf("convert %s list item: %w", gvk.Kind, err)
			}
			ul.Items = append(ul.Items, unstructured.Unstructured{Object: m})
		}
	} else if !setItems(list, objs, deepCopy) {
		items := make([]runtime.Object, len(objs))
		for i, o := range objs {
			items[i] = o
			if deepCopy {
				items[i] = o.DeepCopyObject()
			}
		}
		if err := meta.SetList(list, items); err != nil {
			return fmt.Errorf("fill %s list: %w", gvk.Kind, err)
		}
	}
	list.SetResourceVersion(rv)
	if tm, ok := list.GetObjectKind().(*metav1.TypeMeta); ok {
		// what SetGroupVersionKind sets, its strings made once per kind
		tm.APIVersion, tm.Kind = listTypeMeta(gvk)
	} else {
		list.GetObjectKind().SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	}
	return nil
}

// listTypeMetas holds, per item kind, its list's apiVersion and kind.
var listTypeMetas sync.Map // schema.GroupVersionKind → [2]string

func listTypeMeta(item schema.GroupVersionKind) (string, string) {
	if tm, ok := listTypeMetas.Load(item); ok {
		s := tm.([2]string)
		return s[0], s[1]
	}
	apiVersion, kind := item.GroupVersion().WithKind(item.Kind + "List").ToAPIVersionAndKind()
	listTypeMetas.Store(item, [2]string{apiVersion, kind})
	return apiVersion, kind
}

// listItems is, per typed list type, the index of its Items field and the
// struct type of an item (listItems[t] is nil when t has no such field).
var listItems sync.Map // reflect.Type → *itemsField

type itemsField struct {
	index int
	elem  reflect.Type
}

// setItems sets a typed list's Items to the objects (deep copies when
// deepCopy; else shallow copies of their structs, as controller-runtime's
// cache reader fills a list with UnsafeDisableDeepCopy): what
// meta.SetList does, without looking the field up and checking each item
// by reflection every time. It returns false, setting nothing, for a list
// it does not handle (no Items slice of structs, an object of another
// type), which meta.SetList then fills. An Items that is empty but has
// room (a caller reusing its list: list.Items = list.Items[:0]) is filled
// in place, as append would fill it; meta.SetList makes a new slice, which
// only a caller still holding the old one's elements could tell apart —
// the same contract as append's.
func setItems(list client.ObjectList, objs []client.Object, deepCopy bool) bool {
	lv := reflect.ValueOf(list)
	if lv.Kind() != reflect.Pointer || lv.IsNil() || lv.Elem().Kind() != reflect.Struct {
		return false
	}
	lt := lv.Elem().Type()
	var f *itemsField
	if c, ok := listItems.Load(lt); ok {
		f = c.(*itemsField)
	} else {
		if sf, ok := lt.FieldByName("Items"); ok && len(sf.Index) == 1 && sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.Struct {
			f = &itemsField{index: sf.Index[0], elem: sf.Type.Elem()}
		}
		listItems.Store(lt, f)
	}
	if f == nil {
		return false
	}
	ptrType := reflect.PointerTo(f.elem)
	for _, o := range objs {
		if reflect.TypeOf(o) != ptrType {
			return false
		}
	}
	items := lv.Elem().Field(f.index)
	inPlace := items.Len() == 0 && items.Cap() >= len(objs) && !items.IsNil()
	if inPlace {
		// An empty Items with room, as a caller that reuses its list
		// leaves it (list.Items = list.Items[:0]): filled in place, as
		// append would fill it.
		items.SetLen(len(objs))
	} else {
		items = reflect.MakeSlice(reflect.SliceOf(f.elem), len(objs), len(objs))
	}
	for i, o := range objs {
		if deepCopy {
			o = o.DeepCopyObject().(client.Object)
		}
		items.Index(i).Set(reflect.ValueOf(o).Elem())
	}
	if !inPlace {
		lv.Elem().Field(f.index).Set(items)
	}
	return true
}

// typed returns obj as a typed object of kind gvk (converting
// unstructured input) — the store holds typed objects only.
func (c *simClient) typed(gvk schema.GroupVersionKind, obj client.Object) (client.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	ro, err := c.s.scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("kind %s of %s: %w", gvk, objectName(obj), err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ro); err != nil {
		return nil, fmt.Errorf("convert %s from unstructured: %w", objectName(obj), err)
	}
	return ro.(client.Object), nil
}

func isDryRun(dr []string) bool { return len(dr) > 0 && dr[0] == metav1.DryRunAll }
