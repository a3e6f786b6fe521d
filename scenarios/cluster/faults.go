package cluster

import (
	"errors"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// Faults are injected at the operator's API boundary — its recording
// client — so that the same fault means the same on both backends: the
// operator cannot tell an injected 409 from the API server's.
type Faults struct {
	mu sync.Mutex
	// conflicts: the first this-many attempts of each write (per object
	// and subresource) fail with 409 Conflict.
	conflicts int
	attempts  map[string]int
	// stalled replicas' calls time out.
	stalled map[int]bool
	// after is the backend's hook after each call (random kills).
	after func(op *judge.Op)
}

func newFaults() *Faults {
	return &Faults{attempts: map[string]int{}, stalled: map[int]bool{}}
}

// RejectWrites makes the first n attempts of every write of the operator
// — to each object and subresource — fail with 409 Conflict.
func (f *Faults) RejectWrites(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conflicts = n
}

func (f *Faults) stall(replica int, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stalled[replica] = on
}

// errStalled is what a stalled replica's calls fail with.
var errStalled = errors.New("client rate limiter Wait returned an error: context deadline exceeded (network stalled)")

// Target names the object (and subresource) an operation writes.
func Target(op *judge.Op) string {
	return strings.TrimSuffix(op.Kind+"/"+op.Name+"/"+op.Sub, "/")
}

// Inject implements judge.Faults.
func (f *Faults) Inject(op *judge.Op) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stalled[op.Replica] {
		return apierrors.NewTimeoutError(errStalled.Error(), 1)
	}
	if !op.Write() || f.conflicts == 0 {
		return nil
	}
	t := Target(op)
	f.attempts[t]++
	if f.attempts[t] <= f.conflicts {
		gr := schema.GroupResource{Resource: strings.ToLower(op.Kind) + "s"}
		return apierrors.NewConflict(gr, op.Name, errors.New("the object has been modified; please apply your changes to the latest version and try again (injected)"))
	}
	return nil
}

// After implements judge.Faults.
func (f *Faults) After(op *judge.Op) {
	f.mu.Lock()
	after := f.after
	f.mu.Unlock()
	if after != nil {
		after(op)
	}
}
