package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CheckSharedReads turns on the check of shared reads: every object a
// shared read (or a watch event) hands out is hashed, and the hashes are
// verified after the event that read it (and before the next shared read);
// a changed object panics naming it and its reader. It also checks each
// no-op detection of a /status write against the whole-object comparison
// (sameContent), and semanticEqual against equality.Semantic.DeepEqual on
// every write. It costs a JSON encoding per object handed out, so it is
// on in tests (testing.Testing) and off otherwise; benchmarks turn it off.
// Set it before creating a Sim.
var CheckSharedReads = testing.Testing()

var (
	gvkPod        = corev1.SchemeGroupVersion.WithKind("Pod")
	gvkReplicaSet = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	gvkDeployment = appsv1.SchemeGroupVersion.WithKind("Deployment")
)

// listShared lists the objects of kind gvk in namespace ns ("" for all),
// in key order, as an informer's lister serves them
// (k8s.io/client-go/listers: the cache's own pointers, no copy): the
// stored objects themselves, which the caller must not modify — the store
// replaces an object on every write and never changes one in place, so a
// stored pointer is a consistent snapshot. The request is intercepted as
// a list (faults apply as to List).
func (c *simClient) listShared(gvk schema.GroupVersionKind, ns string) ([]client.Object, error) {
	return c.listSharedInto(nil, gvk, ns)
}

// listSharedInto is listShared appending to out.
func (c *simClient) listSharedInto(out []client.Object, gvk schema.GroupVersionKind, ns string) ([]client.Object, error) {
	if err := c.intercept("list", gvk, ns, "", ""); err != nil {
		return out, err
	}
	objs, err := c.s.store.selectObjectsInto(out, gvk, &client.ListOptions{Namespace: ns})
	if err != nil {
		return out, err
	}
	c.s.shared.handOut(c.name, objs...)
	return objs, nil
}

// listTyped is listShared typed as T: the selection goes into a slice the
// store reuses (its elements are copied into the typed slice), so a typed
// list makes one slice, not also the growing untyped one.
func listTyped[T client.Object](c *simClient, gvk schema.GroupVersionKind, ns string) ([]T, error) {
	st := c.s.store
	objs, err := c.listSharedInto(st.sharedScratch[:0], gvk, ns)
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = o.(T)
	}
	clear(objs)
	st.sharedScratch = objs[:0]
	return out, err
}

// listPodsShared is listShared of pods, typed (PodLister.Pods(ns).List).
func (c *simClient) listPodsShared(ns string) ([]*corev1.Pod, error) {
	return listTyped[*corev1.Pod](c, gvkPod, ns)
}

// listReplicaSetsShared is listShared of ReplicaSets, typed.
func (c *simClient) listReplicaSetsShared(ns string) ([]*appsv1.ReplicaSet, error) {
	return listTyped[*appsv1.ReplicaSet](c, gvkReplicaSet, ns)
}

// getReplicaSetShared is the stored ReplicaSet itself, read-only, as
// rsLister.ReplicaSets(ns).Get answers (a NotFound error when there is
// none): no struct to fill, so nothing is allocated for a read.
func (c *simClient) getReplicaSetShared(key client.ObjectKey) (*appsv1.ReplicaSet, error) {
	if err := c.intercept("get", gvkReplicaSet, key.Namespace, key.Name, ""); err != nil {
		return nil, err
	}
	cur, err := c.s.store.getAt(gvkReplicaSet, key)
	if err != nil {
		return nil, err
	}
	rs, ok := cur.(*appsv1.ReplicaSet)
	if !ok || rs == nil {
		return nil, notFound(gvkReplicaSet, key.Name)
	}
	c.s.shared.handOut(c.name, cur)
	return rs, nil
}

// SharedLister lists as an informer's lister does: the stored objects
// themselves, read-only (see CheckSharedReads). For stop conditions and
// observers that read after every event and change nothing.
type SharedLister struct{ c *simClient }

// SharedLister returns a lister whose reads carry name as APIRequest.Client.
func (s *Sim) SharedLister(name string) SharedLister { return SharedLister{c: s.clientFor(name)} }

// List returns the objects of kind gvk (at that version) in namespace ns
// ("" for all) matching opts, in key order; the caller must not modify them.
func (l SharedLister) List(_ context.Context, gvk schema.GroupVersionKind, ns string) ([]client.Object, error) {
	return l.c.listShared(gvk, ns)
}

// sharedReads is the check of CheckSharedReads: the objects handed out
// since the last verification, with their hashes and readers.
type sharedReads struct {
	on   bool
	seen map[client.Object]sharedRead
}

type sharedRead struct {
	hash   uint64
	reader string
}

func (r *sharedReads) handOut(reader string, objs ...client.Object) {
	if !r.on {
		return
	}
	r.verify()
	if r.seen == nil {
		r.seen = map[client.Object]sharedRead{}
	}
	for _, o := range objs {
		if _, ok := r.seen[o]; !ok {
			r.seen[o] = sharedRead{hash: hashObject(o), reader: reader}
		}
	}
}

// verify panics when an object handed out has changed since.
func (r *sharedReads) verify() {
	for o, h := range r.seen {
		if hashObject(o) != h.hash {
			panic(fmt.Sprintf("simulator: %T %s, read shared by %s, was modified in place: copy it (DeepCopy) before changing it, as with an informer's lister",
				o, objectName(o), h.reader))
		}
	}
}

// endEvent verifies and forgets the objects handed out during an event.
func (r *sharedReads) endEvent() {
	if len(r.seen) == 0 {
		return
	}
	r.verify()
	clear(r.seen)
}

func hashObject(o client.Object) uint64 {
	data, err := json.Marshal(o)
	if err != nil {
		panic(fmt.Sprintf("simulator: hash %s: %v", objectName(o), err))
	}
	h := fnv.New64a()
	_, _ = h.Write(data)
	return h.Sum64()
}
