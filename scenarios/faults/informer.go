package faults

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/simulator"
)

// informerKinds are the kinds the operator reads, by the names the
// "kind" parameter uses.
var informerKinds = map[string]client.Object{
	"upgrades":    &upgradesv1beta1.ApplicationUpgrade{}, // the version the operator reads
	"deployments": &appsv1.Deployment{},
	"replicasets": &appsv1.ReplicaSet{},
	"pods":        &corev1.Pod{},
	// The other workload kinds (TestInformersCoverEveryWatchedKind: a kind
	// the operator watches but no informer models would never wake it
	// under a fault, as happened to StatefulSets).
	"statefulsets":        &appsv1.StatefulSet{},
	"daemonsets":          &appsv1.DaemonSet{},
	"controllerrevisions": &appsv1.ControllerRevision{},
}

// informers models one operator process's controller-runtime cache: one
// informer per kind, each a copy of the store fed by the watch, that
// applies an event to its copy and only then hands it to the controller —
// so the operator's reads and wake-ups lag alike. With no fault active an
// event is applied as it commits (reads as fresh as the store). A lag
// holds events back by time or by count; a drop loses them until the
// window ends and the informer relists (the reflector's list + replace).
type informers struct {
	sim     *simulator.Sim
	scheme  *runtime.Scheme
	lister  client.Client
	ctl     *simulator.Controller // nil until the operator runs: events are then only applied
	kinds   map[schema.GroupVersionKind]*informer
	indexes map[schema.GroupVersionKind]map[string]client.IndexerFunc
	// paused: the process is stopped; events wait in pending, relists
	// until resume.
	paused bool
}

type informer struct {
	name    string
	retry   time.Duration // the reflector's back-off after a failed list
	list    func() client.ObjectList
	objs    map[types.NamespacedName]client.Object
	pending []simulator.WatchEvent
	lag     time.Duration
	events  int
	drop    bool
	pumping bool
	// relistDue: a relist fell due while the process was paused.
	relistDue bool
}

func newInformers(sim *simulator.Sim, lister client.Client) (*informers, error) {
	inf := &informers{sim: sim, scheme: sim.Scheme(), lister: lister,
		kinds: map[schema.GroupVersionKind]*informer{}, indexes: map[schema.GroupVersionKind]map[string]client.IndexerFunc{}}
	lists := map[string]func() client.ObjectList{
		"upgrades":            func() client.ObjectList { return &upgradesv1beta1.ApplicationUpgradeList{} },
		"deployments":         func() client.ObjectList { return &appsv1.DeploymentList{} },
		"replicasets":         func() client.ObjectList { return &appsv1.ReplicaSetList{} },
		"pods":                func() client.ObjectList { return &corev1.PodList{} },
		"statefulsets":        func() client.ObjectList { return &appsv1.StatefulSetList{} },
		"daemonsets":          func() client.ObjectList { return &appsv1.DaemonSetList{} },
		"controllerrevisions": func() client.ObjectList { return &appsv1.ControllerRevisionList{} },
	}
	var versions []schema.GroupVersion // the informers' versions: events arrive converted to them
	for name, proto := range informerKinds {
		gvk, err := apiutil.GVKForObject(proto, inf.scheme)
		if err != nil {
			return nil, err
		}
		inf.kinds[gvk] = &informer{name: name, list: lists[name], objs: map[types.NamespacedName]client.Object{}}
		versions = append(versions, gvk.GroupVersion())
	}
	sim.Subscribe(inf.observe, versions...)
	return inf, nil
}

// IndexField implements client.FieldIndexer for the operator's indexes.
func (inf *informers) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	gvk, err := apiutil.GVKForObject(obj, inf.scheme)
	if err != nil {
		return err
	}
	if inf.indexes[gvk] == nil {
		inf.indexes[gvk] = map[string]client.IndexerFunc{}
	}
	inf.indexes[gvk][field] = fn
	return nil
}

// matching returns the informers a "kind" parameter names.
func (inf *informers) matching(kind string) []*informer {
	var out []*informer
	for _, i := range inf.kinds {
		if kind == "all" || i.name == kind {
			out = append(out, i)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].name < out[b].name })
	return out
}

func (inf *informers) observe(ev simulator.WatchEvent) {
	i := inf.kinds[ev.Object.GetObjectKind().GroupVersionKind()]
	if i == nil || i.drop {
		return
	}
	if len(i.pending) == 0 && i.lag == 0 && i.events == 0 && !inf.paused {
		i.apply(ev)
		inf.deliverLater(ev)
		return
	}
	i.pending = append(i.pending, ev)
	inf.pumpLater(i, 0)
}

// deliverLater hands ev to the controller in a scheduled event, as the
// simulator's own watch delivery does.
func (inf *informers) deliverLater(ev simulator.WatchEvent) {
	if inf.ctl == nil {
		return
	}
	ctl := inf.ctl
	inf.sim.Schedule(0, "informer event to "+ctl.Name(), func() { ctl.Inject(ev) })
}

func (inf *informers) pumpLater(i *informer, after time.Duration) {
	if i.pumping {
		return
	}
	i.pumping = true
	inf.sim.Schedule(after, "informer "+i.name+" catches up", func() {
		i.pumping = false
		inf.pump(i)
	})
}

// pump applies and delivers every pending event that is due: committed at
// least lag ago and followed by at least events later ones.
func (inf *informers) pump(i *informer) {
	for len(i.pending) > 0 && !inf.paused {
		ev := i.pending[0]
		if len(i.pending)-1 < i.events {
			return // wait for more events (or the end of the window)
		}
		if due := ev.Time.Add(i.lag); due.After(inf.sim.Now()) {
			inf.pumpLater(i, due.Sub(inf.sim.Now()))
			return
		}
		i.pending = i.pending[1:]
		i.apply(ev)
		if inf.ctl != nil {
			inf.ctl.Inject(ev)
		}
	}
}

func (i *informer) apply(ev simulator.WatchEvent) {
	key := client.ObjectKeyFromObject(ev.Object)
	if ev.Type == watch.Deleted {
		delete(i.objs, key)
		return
	}
	i.objs[key] = ev.Object
}

// setLag starts (or, with zeros, ends) a lag on informers of kind.
func (inf *informers) setLag(kind string, lag time.Duration, events int) {
	for _, i := range inf.matching(kind) {
		i.lag, i.events = lag, events
		inf.pumpLater(i, 0)
	}
}

// setDrop starts a drop on informers of kind; ending it relists.
func (inf *informers) setDrop(ctx context.Context, kind string, drop bool) {
	for _, i := range inf.matching(kind) {
		i.drop = drop
		if !drop {
			inf.relist(ctx, i)
		}
	}
}

// relist is the reflector's list + replace: pending events are applied,
// then the copy is replaced by the store's content and the differences
// are delivered as events.
func (inf *informers) relist(ctx context.Context, i *informer) {
	if inf.paused {
		i.relistDue = true
		return
	}
	for _, ev := range i.pending {
		i.apply(ev)
		inf.deliverLater(ev)
	}
	i.pending = nil
	list := i.list()
	if err := inf.lister.List(ctx, list); err != nil {
		inf.retryRelist(ctx, i)
		return
	}
	i.retry = 0
	items, _ := meta.ExtractList(list)
	seen := map[types.NamespacedName]bool{}
	for _, it := range items {
		obj := it.(client.Object)
		gvk, _ := apiutil.GVKForObject(obj, inf.scheme)
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		key := client.ObjectKeyFromObject(obj)
		seen[key] = true
		old, ok := i.objs[key]
		switch {
		case !ok:
			i.objs[key] = obj
			inf.deliverLater(simulator.WatchEvent{Type: watch.Added, Object: obj, Time: inf.sim.Now()})
		case old.GetResourceVersion() != obj.GetResourceVersion():
			i.objs[key] = obj
			inf.deliverLater(simulator.WatchEvent{Type: watch.Modified, Object: obj, Old: old, Time: inf.sim.Now()})
		}
	}
	for _, key := range sortedKeys(i.objs) {
		if !seen[key] {
			old := i.objs[key]
			delete(i.objs, key)
			inf.deliverLater(simulator.WatchEvent{Type: watch.Deleted, Object: old, Time: inf.sim.Now()})
		}
	}
}

// retryRelist lists again after client-go's reflector back-off (800 ms
// doubling to 30 s); events stay dropped until the list succeeds.
func (inf *informers) retryRelist(ctx context.Context, i *informer) {
	i.retry = min(max(2*i.retry, 800*time.Millisecond), 30*time.Second)
	i.drop = true
	inf.sim.Schedule(i.retry, "informer "+i.name+" relists", func() {
		i.drop = false
		inf.relist(ctx, i)
	})
}

// pause stops the informers with their process: the watch events that
// commit meanwhile wait (a stopped process's socket buffers hold them),
// its reads see the cache as it was.
func (inf *informers) pause() { inf.paused = true }

// resume continues them: each informer works off its pending events in
// scheduled events of its own (the process's reconciles may run first,
// on the cache as it was), and relists if a relist fell due meanwhile.
func (inf *informers) resume(ctx context.Context) {
	inf.paused = false
	for _, i := range inf.matching("all") {
		if i.relistDue {
			i.relistDue = false
			inf.sim.Schedule(0, "informer "+i.name+" relists", func() { inf.relist(ctx, i) })
			continue
		}
		inf.pumpLater(i, 0)
	}
}

// reset is a cold start: every informer lists the store afresh; lags and
// drops in force stay in force. An error means a list failed: the caches
// have not synced and the controller must not start yet.
func (inf *informers) reset(ctx context.Context) error {
	inf.paused = false // a new process
	for _, i := range inf.matching("all") {
		i.pending, i.relistDue = nil, false
		i.objs = map[types.NamespacedName]client.Object{}
		list := i.list()
		if err := inf.lister.List(ctx, list); err != nil {
			return fmt.Errorf("list %s: %w", i.name, err)
		}
		items, _ := meta.ExtractList(list)
		for _, it := range items {
			obj := it.(client.Object)
			gvk, _ := apiutil.GVKForObject(obj, inf.scheme)
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			i.objs[client.ObjectKeyFromObject(obj)] = obj
		}
	}
	return nil
}

func sortedKeys(m map[types.NamespacedName]client.Object) []types.NamespacedName {
	keys := make([]types.NamespacedName, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a].String() < keys[b].String() })
	return keys
}

// tracks reports whether obj (an object or a list) is a kind the informers hold.
func (inf *informers) tracks(obj runtime.Object) (*informer, schema.GroupVersionKind) {
	gvk, err := apiutil.GVKForObject(obj, inf.scheme)
	if err != nil {
		return nil, gvk
	}
	if _, isList := obj.(client.ObjectList); isList {
		gvk.Kind = gvk.Kind[:len(gvk.Kind)-len("List")]
	}
	return inf.kinds[gvk], gvk
}

// Get reads from the copy, as the cache-backed client does.
func (inf *informers) Get(key client.ObjectKey, obj client.Object) error {
	i, gvk := inf.tracks(obj)
	cur := i.objs[key]
	if cur == nil {
		return notFound(gvk, key.Name)
	}
	return assignInto(obj, cur)
}

// List reads from the copy, in namespace/name order, honouring the
// namespace, label selector and field selectors on registered indexes.
func (inf *informers) List(list client.ObjectList, opts ...client.ListOption) error {
	i, gvk := inf.tracks(list)
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	var items []runtime.Object
	for _, key := range sortedKeys(i.objs) {
		o := i.objs[key]
		if lo.Namespace != "" && o.GetNamespace() != lo.Namespace {
			continue
		}
		if lo.LabelSelector != nil && !lo.LabelSelector.Matches(labels.Set(o.GetLabels())) {
			continue
		}
		ok, err := inf.fieldsMatch(gvk, o, lo)
		if err != nil {
			return err
		}
		if ok {
			items = append(items, o.DeepCopyObject())
		}
	}
	if err := meta.SetList(list, items); err != nil {
		return fmt.Errorf("fill %s list from the informer: %w", gvk.Kind, err)
	}
	return nil
}

func (inf *informers) fieldsMatch(gvk schema.GroupVersionKind, o client.Object, lo *client.ListOptions) (bool, error) {
	if lo.FieldSelector == nil || lo.FieldSelector.Empty() {
		return true, nil
	}
	for _, req := range lo.FieldSelector.Requirements() {
		var values []string
		switch req.Field {
		case "metadata.name":
			values = []string{o.GetName()}
		case "metadata.namespace":
			values = []string{o.GetNamespace()}
		default:
			fn := inf.indexes[gvk][req.Field]
			if fn == nil {
				return false, fmt.Errorf("field selector %q on %s: no index registered with the informer", req.Field, gvk.Kind)
			}
			values = fn(o)
		}
		found := false
		for _, v := range values {
			found = found || v == req.Value
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}

func assignInto(dst, src client.Object) error {
	cp := src.DeepCopyObject()
	dv, sv := reflect.ValueOf(dst), reflect.ValueOf(cp)
	if dv.Type() != sv.Type() {
		return fmt.Errorf("cannot store %T into %T", cp, dst)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}
