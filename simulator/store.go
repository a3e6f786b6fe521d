package simulator

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// store is the in-memory API server storage: typed objects per kind, one
// global resourceVersion counter (like etcd's revision), and the commit
// path that notifies subscribers. Stored objects are never mutated in
// place: every write replaces the entry, so a stored pointer is a snapshot.
type store struct {
	s      *Sim
	rv     uint64
	uids   uint64
	kinds  map[schema.GroupVersionKind]map[types.NamespacedName]client.Object
	sorted map[schema.GroupVersionKind][]client.Object // list's answer per kind, until the next commit of that kind
	// sortedKeys are each kind's keys in list order, until an object of
	// the kind is added or removed (a modification keeps the keys).
	sortedKeys map[schema.GroupVersionKind][]types.NamespacedName
	// freeEvents are versionedEvents whose commit has told every
	// subscriber, reused by the next commit (no subscriber keeps one).
	freeEvents    []*versionedEvent
	indexed       map[schema.GroupKind]map[indexedKey][]string // registered indexes' values per object, until the next commit of that kind
	indexes       map[schema.GroupVersionKind]map[string]client.IndexerFunc
	clusterScoped map[schema.GroupKind]bool
	conversions   map[schema.GroupKind]*kindConversion
	fieldManagers map[schema.GroupVersionKind]*managedfields.FieldManager
	// listScratch holds a typed list's selected objects between
	// selectObjects and fillList (which copies them into the list's
	// items); emptied after each use.
	listScratch []client.Object
	// sharedScratch holds a typed lister list's selection until its
	// elements are copied into the typed slice (listTyped).
	sharedScratch []client.Object
	// rvText is rv as decimal text while rv is rvTextOf (a list's
	// resourceVersion, the same string for every list between commits).
	rvText   string
	rvTextOf uint64
}

// rvString is the current resourceVersion as text.
func (st *store) rvString() string {
	if st.rvTextOf != st.rv || st.rvText == "" {
		st.rvText, st.rvTextOf = strconv.FormatUint(st.rv, 10), st.rv
	}
	return st.rvText
}

func newStore(s *Sim) *store {
	st := &store{
		s:             s,
		kinds:         map[schema.GroupVersionKind]map[types.NamespacedName]client.Object{},
		sorted:        map[schema.GroupVersionKind][]client.Object{},
		sortedKeys:    map[schema.GroupVersionKind][]types.NamespacedName{},
		indexed:       map[schema.GroupKind]map[indexedKey][]string{},
		indexes:       map[schema.GroupVersionKind]map[string]client.IndexerFunc{},
		clusterScoped: map[schema.GroupKind]bool{},
		conversions:   map[schema.GroupKind]*kindConversion{},
		fieldManagers: map[schema.GroupVersionKind]*managedfields.FieldManager{},
	}
	for _, gk := range builtinClusterScoped {
		st.clusterScoped[gk] = true
	}
	return st
}

// builtinClusterScoped lists the built-in kinds that live outside namespaces.
var builtinClusterScoped = []schema.GroupKind{
	{Kind: "Namespace"}, {Kind: "Node"}, {Kind: "PersistentVolume"}, {Kind: "ComponentStatus"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"},
	{Group: "storage.k8s.io", Kind: "StorageClass"},
	{Group: "storage.k8s.io", Kind: "CSIDriver"},
	{Group: "storage.k8s.io", Kind: "CSINode"},
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"},
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"},
	{Group: "node.k8s.io", Kind: "RuntimeClass"},
	{Group: "networking.k8s.io", Kind: "IngressClass"},
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
	{Group: "apiregistration.k8s.io", Kind: "APIService"},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"},
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"},
}

// SetClusterScoped declares a kind (typically a CRD type) cluster-scoped:
// its objects have no namespace. Every other kind not built in is namespaced.
func (s *Sim) SetClusterScoped(gk schema.GroupKind) { s.store.clusterScoped[gk] = true }

func (st *store) namespaced(gvk schema.GroupVersionKind) bool {
	return !st.clusterScoped[gvk.GroupKind()]
}

// gvkFor resolves an object's kind from the scheme (typed) or its TypeMeta
// (unstructured).
func (st *store) gvkFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	gvk, err := apiutil.GVKForObject(obj, st.s.scheme)
	if err != nil {
		return gvk, fmt.Errorf("kind of %T is not registered in the simulator's scheme: %w", obj, err)
	}
	return gvk, nil
}

// listItemGVK is the kind of a list's items (FooList → Foo).
func (st *store) listItemGVK(list runtime.Object) (schema.GroupVersionKind, error) {
	gvk, err := st.gvkFor(list)
	if err != nil {
		return gvk, err
	}
	if !strings.HasSuffix(gvk.Kind, "List") || !meta.IsListType(list) {
		return gvk, fmt.Errorf("%s is not a list type", gvk.Kind)
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	return gvk, nil
}

func resourceFor(gvk schema.GroupVersionKind) schema.GroupResource {
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.GroupResource()
}

func (st *store) get(gvk schema.GroupVersionKind, key types.NamespacedName) client.Object {
	return st.kinds[gvk][key]
}

// list returns the stored objects of a kind ordered by namespace and name,
// the order etcd's key space gives the real API server. The slice is kept
// until the kind's next commit and shared by every caller until then:
// callers must not modify it (a commit drops it, never changes it, so a
// caller ranging over it while writing sees the list as it was).
func (st *store) list(gvk schema.GroupVersionKind) []client.Object {
	if out, ok := st.sorted[gvk]; ok {
		return out
	}
	out := st.sortedObjects(gvk)
	st.sorted[gvk] = out
	return out
}

func (st *store) sortedObjects(gvk schema.GroupVersionKind) []client.Object {
	objs := st.kinds[gvk]
	keys, ok := st.sortedKeys[gvk]
	if !ok {
		keys = objectKeysSorted(objs)
		st.sortedKeys[gvk] = keys
	} else if st.s.shared.on && !slices.Equal(keys, objectKeysSorted(objs)) {
		panic(fmt.Sprintf("simulator: the remembered list order of %s is stale", gvk.Kind))
	}
	out := make([]client.Object, len(keys))
	for i, k := range keys {
		out[i] = objs[k]
	}
	return out
}

// objectKeysSorted are objs' keys ordered by namespace and name.
func objectKeysSorted(objs map[types.NamespacedName]client.Object) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(objs))
	for k := range objs {
		keys = append(keys, k)
	}
	// Keys are distinct: any sort gives the one order (slices.SortFunc
	// without sort.Slice's reflective swapper).
	slices.SortFunc(keys, func(a, b types.NamespacedName) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return keys
}

// kindsSorted lists every kind that has held objects, in a stable order.
func (st *store) kindsSorted() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(st.kinds))
	for gvk := range st.kinds {
		out = append(out, gvk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func (st *store) nextRV() string {
	st.rv++
	return fmt.Sprintf("%d", st.rv)
}

// commit stores (or, for Deleted, removes) obj and tells every subscriber,
// in subscription order, before returning. old is the previous version;
// both are at the storage version gvk.
func (st *store) commit(typ watch.EventType, gvk schema.GroupVersionKind, obj, old client.Object) {
	key := client.ObjectKeyFromObject(obj)
	delete(st.sorted, gvk)
	delete(st.indexed, gvk.GroupKind())
	m := st.kinds[gvk]
	if m == nil {
		m = map[types.NamespacedName]client.Object{}
		st.kinds[gvk] = m
	}
	if typ == watch.Deleted {
		delete(m, key)
		delete(st.sortedKeys, gvk)
		st.forgetConversions(gvk, key)
	} else {
		if _, had := m[key]; !had {
			delete(st.sortedKeys, gvk)
		}
		m[key] = obj
	}
	if len(st.s.subs) == 0 {
		return
	}
	// Subscribers get the stored object itself, shared and read-only, as an
	// informer's event handlers get the cache's (checked with CheckSharedReads).
	st.s.shared.handOut("a watch subscriber", obj)
	// The event is taken from freeEvents and given back once every
	// subscriber has had it: subscribers read it only while notified
	// (dispatch copies what it delivers, the others get a WatchEvent
	// value), and a commit made by a subscriber takes another one. Its
	// conversions map is cleared, not dropped.
	var ev *versionedEvent
	if n := len(st.freeEvents); n > 0 {
		ev, st.freeEvents = st.freeEvents[n-1], st.freeEvents[:n-1]
	} else {
		ev = new(versionedEvent)
	}
	conv := ev.conv
	clear(conv)
	*ev = versionedEvent{st: st, gvk: gvk, stored: obj, conv: conv,
		ev: WatchEvent{Type: typ, Object: obj, Old: old, Time: st.s.now, Stored: obj}}
	for _, sub := range st.s.subs {
		sub.notify(ev)
	}
	clear(ev.conv)
	*ev = versionedEvent{conv: ev.conv}
	st.freeEvents = append(st.freeEvents, ev)
}
