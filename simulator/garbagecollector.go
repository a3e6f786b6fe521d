package simulator

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// garbageCollector models kube-controller-manager's garbage collector
// (pkg/controller/garbagecollector) for background cascading deletion: once
// an object is gone, each dependent (an object whose ownerReferences name
// its UID) none of whose owners still exists is deleted like any client
// would delete it (pods gracefully). Foreground deletion, the
// blockOwnerDeletion protocol and removal of dangling references from
// dependents that keep a live owner are not modelled.
type garbageCollector struct {
	s *Sim
	c *simClient
}

func newGarbageCollector(s *Sim) *garbageCollector {
	return &garbageCollector{s: s, c: s.clientFor("kube-controller-manager")}
}

func (gc *garbageCollector) install() {
	gc.s.Subscribe(func(ev WatchEvent) {
		if ev.Type != watch.Deleted {
			return
		}
		uid := ev.Object.GetUID()
		gc.s.Schedule(0, "garbage-collect dependents of "+objectName(ev.Object), func() { gc.collect(uid) })
	})
}

func (gc *garbageCollector) collect(owner types.UID) {
	live := map[types.UID]bool{}
	var dependents []client.Object
	for _, gvk := range gc.s.store.kindsSorted() {
		for _, o := range gc.s.store.list(gvk) {
			live[o.GetUID()] = true
			for _, r := range o.GetOwnerReferences() {
				if r.UID == owner {
					dependents = append(dependents, o)
					break
				}
			}
		}
	}
	for _, d := range dependents {
		if d.GetDeletionTimestamp() != nil || hasLiveOwner(d, live) {
			continue
		}
		err := gc.c.Delete(gc.s.ctx(), d.DeepCopyObject().(client.Object), client.PropagationPolicy("Background"))
		if err != nil && !apierrors.IsNotFound(err) {
			gc.s.Schedule(Backoff(0), "garbage-collect retry", func() { gc.collect(owner) })
			return
		}
	}
}

func hasLiveOwner(o client.Object, live map[types.UID]bool) bool {
	for _, r := range o.GetOwnerReferences() {
		if live[r.UID] {
			return true
		}
	}
	return false
}
