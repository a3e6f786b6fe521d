package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// Write back-off: the delay after the n-th consecutive failed pass (n from
// 0) is writeBackoffBase·2ⁿ capped at writeBackoffMax — client-go's
// per-item exponential limiter (k8s.io/client-go/util/workqueue
// DefaultTypedControllerRateLimiter: 5 ms doubling to 1000 s), which
// controller-runtime's workqueue applies to a failing request.
const (
	writeBackoffBase = 5 * time.Millisecond
	writeBackoffMax  = 1000 * time.Second
)

// writeHolds keeps, per upgrade, the back-off after a pass whose image
// write or status patch failed. controller-runtime backs a failing request off in its
// workqueue, but a watch event re-queues the request at once
// (reconcileHandler → Queue.Add), so while the workloads keep changing —
// pods becoming Ready, the Deployment controller publishing its counters —
// each event would retry a rejected write immediately. A hold makes the
// next pass wait for the back-off whatever woke it, unless the upgrade's
// spec changed (a new generation is a new decision, taken at once). It is
// flow control, not decision state: a restarted process starts with none
// (ForgetProcessState), as a new workqueue does; a copy of a reconciler
// (another process's) must call ForgetProcessState before its first pass.
type writeHolds struct {
	mu sync.Mutex
	m  map[types.NamespacedName]writeHold
}

type writeHold struct {
	generation int64
	failures   int
	until      time.Time
}

// wait is how long a pass of key at generation must still wait at now (0:
// go ahead). A hold of an older generation is dropped.
func (h *writeHolds) wait(key types.NamespacedName, generation int64, now time.Time) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	hold, ok := h.m[key]
	if !ok {
		return 0
	}
	if hold.generation != generation {
		delete(h.m, key)
		return 0
	}
	return max(hold.until.Sub(now), 0)
}

// failed records a failed pass of key at generation at now and returns its
// back-off.
func (h *writeHolds) failed(key types.NamespacedName, generation int64, now time.Time) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[types.NamespacedName]writeHold{}
	}
	hold := h.m[key]
	if hold.generation != generation {
		hold = writeHold{generation: generation}
	}
	d := writeBackoff(hold.failures)
	hold.failures++
	hold.until = now.Add(d)
	h.m[key] = hold
	return d
}

// clear drops key's hold (its pass succeeded, or the upgrade is gone).
func (h *writeHolds) clear(key types.NamespacedName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, key)
}

// processState is what a reconciler keeps in memory between passes: the
// write holds, its own status patches (ownStatuses) and the template
// comparisons of the rollout assessment (rollout.TemplateMatch, answers of
// a pure function of the objects' UIDs and generations). None decides
// anything; a restart forgets them (ForgetProcessState).
type processState struct {
	holds     writeHolds
	own       ownStatuses
	templates rollout.TemplateMatch
}

// processInit guards the lazy creation of a reconciler's processState (a
// reconciler is a plain struct literal; a copy of one made before its
// first pass, or after ForgetProcessState, shares none).
var processInit sync.Mutex

// process returns r's process state, created on first use.
func (r *ApplicationUpgradeReconciler) process() *processState {
	processInit.Lock()
	defer processInit.Unlock()
	if r.state == nil {
		r.state = &processState{}
	}
	return r.state
}

// writeHolds returns r's holds.
func (r *ApplicationUpgradeReconciler) writeHolds() *writeHolds { return &r.process().holds }

// ownStatuses returns r's own status patches not yet seen in the cache.
func (r *ApplicationUpgradeReconciler) ownStatuses() *ownStatuses { return &r.process().own }

// writeBackoff is the delay after the n-th consecutive failure (n from 0).
func writeBackoff(n int) time.Duration {
	if n > 20 {
		return writeBackoffMax
	}
	return min(writeBackoffBase<<n, writeBackoffMax)
}

// ForgetProcessState drops what the reconciler keeps in memory between
// passes (the write holds and its own status patches), as a restart of its
// process does; the simulator calls it when it crashes the operator's
// process.
func (r *ApplicationUpgradeReconciler) ForgetProcessState() {
	processInit.Lock()
	defer processInit.Unlock()
	r.state = nil
}
