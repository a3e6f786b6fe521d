package controller

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// maxSuperseded bounds how many resourceVersions one chain of the
// reconciler's own status patches remembers (a cache that lags more passes
// than this is read as it is, and the patch's optimistic lock refuses it).
const maxSuperseded = 16

// ownStatuses lets a pass read its own previous status patch when the
// informer cache has not delivered it yet (read-your-writes). The status
// patch carries an optimistic lock (the resourceVersion the pass read), so
// a pass that reads a cache still one of the reconciler's own patches
// behind would be refused with 409 Conflict and wait out a back-off, and
// would decide from a status that is not the latest. Instead, after each
// successful status patch, the object the API server returned is kept with
// the resourceVersion it replaced; a pass whose cached upgrade is at one of
// the resourceVersions the reconciler's own patches replaced reads the kept
// object instead: it is the newest state of the upgrade this process
// knows, and the server has moved past the cached one. Any other
// resourceVersion (the cache has caught up, or someone else wrote) drops
// the kept object and the cache is read as it is; a write by someone else
// after the kept object is still refused by the optimistic lock, as before.
// This is flow state, not decision state: a restarted process starts with
// none (ForgetProcessState), like a new cache.
type ownStatuses struct {
	mu sync.Mutex
	m  map[types.NamespacedName]ownStatus
}

type ownStatus struct {
	// superseded are the resourceVersions the chain of own status patches
	// replaced, oldest first.
	superseded []string
	// obj is what the API server returned for the last of them.
	obj *v1beta1.ApplicationUpgrade
}

// newest replaces *u, as read from the cache, with the reconciler's own
// last status patch when the cache has not delivered it yet, and reports
// whether it did.
func (o *ownStatuses) newest(key types.NamespacedName, u *v1beta1.ApplicationUpgrade) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.m[key]
	if !ok {
		return false
	}
	if slices.Contains(w.superseded, u.ResourceVersion) {
		w.obj.DeepCopyInto(u)
		return true
	}
	delete(o.m, key) // the cache has caught up, or another writer moved it on
	return false
}

// wrote records a successful status patch of key from resourceVersion from
// whose result the API server returned as obj. obj is kept as it is, not
// copied: the caller gives it up (patchStatus's fresh object, into which
// the client decoded the answer, only read after this), and newest hands
// out copies of it.
func (o *ownStatuses) wrote(key types.NamespacedName, from string, obj *v1beta1.ApplicationUpgrade) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[types.NamespacedName]ownStatus{}
	}
	w := o.m[key]
	if w.obj == nil || w.obj.ResourceVersion != from {
		w.superseded = nil // patched from the cache, not from the kept object
	}
	w.superseded = append(w.superseded, from)
	if len(w.superseded) > maxSuperseded {
		w.superseded = w.superseded[len(w.superseded)-maxSuperseded:]
	}
	w.obj = obj
	o.m[key] = w
}

// forget drops key's kept object (the upgrade is gone).
func (o *ownStatuses) forget(key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, key)
}
