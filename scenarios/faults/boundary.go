package faults

import (
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// Boundary is the catalog's API faults at the operator's recording client
// (judge.Recorder.WrapClient), the boundary both backends of the features
// (scenarios/cluster: the simulator and a real API server) give the
// operator: conflict, unavailable, timeout and ambiguous windows (an
// ambiguous write is made, then failed: judge.CommitThenFail), a stalled
// replica's calls, and crash at a call (once, or with p again and again).
// The operator cannot tell an injected 409 from the API server's. The
// faults a backend models itself (a crash at a time, lease-lost, kcm-lag)
// it records here too (Record), so Fired lists them all.
//
// Calls are counted from a fault's arming: "conflict@1" hits the first
// call after the step that injects it. A Boundary is safe for concurrent
// use (a real manager's workers call it at once).
type Boundary struct {
	mu      sync.Mutex
	elapsed func() time.Duration
	kill    func(replica int, f Fault) bool
	rng     *rand.Rand

	calls       int
	armed       map[int][]Fault // by the call they fire at
	windows     []*callWindow
	randomKills []Fault
	stalled     map[int]bool
	fired       []Fired
}

var _ judge.Faults = (*Boundary)(nil)

// NewBoundary returns a boundary whose random draws come from seed;
// elapsed is the run's clock (virtual in the simulator) for Fired, kill
// kills operator process replica for fault f and reports whether it was
// alive (nil: the backend cannot kill at a call).
func NewBoundary(seed int64, elapsed func() time.Duration, kill func(replica int, f Fault) bool) *Boundary {
	return &Boundary{elapsed: elapsed, kill: kill, rng: newKillRand(seed), armed: map[int][]Fault{}, stalled: map[int]bool{}}
}

// Arm arms an API fault or a crash at a call: it fires before the
// f.Call-th call of the operator from now (the next call when f.Call is
// 0, for a time-triggered fault its backend fires now). Other kinds are
// the backend's; Arm refuses them.
func (b *Boundary) Arm(f Fault) error {
	switch f.Kind {
	case Conflict, Unavailable, Timeout, AmbiguousW, Crash:
	default:
		return fmt.Errorf("fault %s is not injected at the operator's API boundary", f)
	}
	if f.Kind == Crash && b.kill == nil {
		return fmt.Errorf("fault %s: this backend cannot kill the operator at an API call", f)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	at := b.calls + max(f.Call, 1)
	b.armed[at] = append(b.armed[at], f)
	return nil
}

// Stall makes replica's calls time out (on) or pass again (off).
func (b *Boundary) Stall(replica int, on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stalled[replica] = on
}

// Stalled reports whether replica's calls time out (its lease client's too).
func (b *Boundary) Stalled(replica int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stalled[replica] {
		return timeoutErr()
	}
	return nil
}

// Record records a fault that fired (d > 0: its known length) with note
// and returns its index in Fired.
func (b *Boundary) Record(f Fault, d time.Duration, note string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.record(f, d, note)
}

func (b *Boundary) record(f Fault, d time.Duration, note string) int {
	now := b.elapsed()
	b.fired = append(b.fired, Fired{Fault: f, Start: now, End: now + d, Note: note})
	return len(b.fired) - 1
}

// Mark records an event of the fault models that is no fault (a line
// of an actor: an apply that failed), shown on the timeline by its note.
func (b *Boundary) Mark(note string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.elapsed()
	b.fired = append(b.fired, Fired{Start: now, End: now, Note: note})
}

// Fired lists the faults fired so far, each crash's kill once.
func (b *Boundary) Fired() []Fired {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Fired(nil), b.fired...)
}

// Inject implements judge.Faults: it counts the call, fires the faults
// armed for it, and fails it as a stall, a kill or an open window says.
func (b *Boundary) Inject(op *judge.Op) error {
	b.mu.Lock()
	if b.stalled[op.Replica] {
		b.mu.Unlock()
		return timeoutErr()
	}
	b.calls++
	var crash *Fault
	for _, f := range b.armed[b.calls] {
		switch {
		case f.Kind == Crash && f.Float("p") > 0:
			b.randomKills = append(b.randomKills, f)
		case f.Kind == Crash:
			crash = &f
		default:
			b.windows = append(b.windows, newCallWindow(f, b.record(f, 0, windowNote(f))))
		}
	}
	delete(b.armed, b.calls)
	for _, f := range b.randomKills {
		if crash == nil && b.rng.Float64()*100 < f.Float("p") {
			crash = &f
		}
	}
	if crash == nil {
		err := b.window(op)
		b.mu.Unlock()
		return err
	}
	b.mu.Unlock()
	// the backend's kill may schedule or stop things: not under b.mu
	if !b.kill(op.Replica, *crash) {
		return nil
	}
	b.Record(*crash, crash.Dur("down"), fmt.Sprintf("operator replica %d killed before its %s, restarts in %s with a cold cache", op.Replica, op.Verb, crash.Str("down")))
	return errKilled
}

// window fails op as the first open window that hits it says.
func (b *Boundary) window(op *judge.Op) error {
	target := OpTarget(op)
	for _, w := range b.windows {
		hit, closed := w.hit(op.Write(), target)
		if !hit {
			continue
		}
		if closed {
			b.fired[w.fired].End = b.elapsed()
		}
		err := injectedErr(w.fault.Kind, schema.GroupResource{Resource: strings.ToLower(op.Kind) + "s"}, op.Name)
		if w.fault.Kind == AmbiguousW {
			return &judge.CommitThenFail{Err: err}
		}
		return err
	}
	return nil
}

// After implements judge.Faults (every fault acts before its call).
func (b *Boundary) After(*judge.Op) {}

// OpTarget names the object and subresource an operation of the
// operator's history hits, as conflict's per=target counts them.
func OpTarget(op *judge.Op) string {
	return writeTarget(op.Kind, types.NamespacedName{Namespace: op.Namespace, Name: op.Name}, op.Sub)
}
