package faults

import (
	"fmt"
	"math/rand"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// callWindow is an API fault (conflict, unavailable, timeout, ambiguous)
// armed at a call: it fails the next n matching calls, or with
// conflict's per=target the first n attempts of each write target. The
// simulator's interceptor (Injector) and the operator's recording client
// (Boundary) both decide with it.
type callWindow struct {
	fault     Fault
	remaining int
	fired     int            // index of its Fired record
	attempts  map[string]int // per=target: attempts failed by target
}

func newCallWindow(f Fault, fired int) *callWindow {
	w := &callWindow{fault: f, remaining: f.Int("n"), fired: fired}
	if f.Str("per") == "target" {
		w.attempts = map[string]int{}
	}
	return w
}

// hit reports whether the window fails a call — write says whether it
// writes, target names the object and subresource — and counts it;
// closed reports that it was the window's last.
func (w *callWindow) hit(write bool, target string) (hit, closed bool) {
	if !write && (w.fault.Kind == Conflict || w.fault.Kind == AmbiguousW) {
		return false, false
	}
	if w.attempts != nil {
		if w.attempts[target] >= w.fault.Int("n") {
			return false, false
		}
		w.attempts[target]++
		return true, false
	}
	if w.remaining == 0 {
		return false, false
	}
	w.remaining--
	return true, w.remaining == 0
}

// windowNote is the line a window's arming prints.
func windowNote(f Fault) string {
	if f.Str("per") == "target" {
		return fmt.Sprintf("the first %d attempts of each write of the operator fail", f.Int("n"))
	}
	noun := "API calls"
	if f.Kind == Conflict || f.Kind == AmbiguousW {
		noun = "writes"
	}
	return fmt.Sprintf("the next %d %s of the operator fail", f.Int("n"), noun)
}

// injectedErr is the error a window's kind fails a call of resource gr,
// object name, with (an ambiguous write is a timeout after the commit).
func injectedErr(k Kind, gr schema.GroupResource, name string) error {
	switch k {
	case Conflict:
		return conflictErr(gr, name)
	case Unavailable:
		return unavailableErr()
	}
	return timeoutErr()
}

// writeTarget names what a write hits: kind/namespace/name/subresource.
func writeTarget(kind string, key types.NamespacedName, sub string) string {
	t := kind + "/"
	if key.Namespace != "" {
		t += key.Namespace + "/"
	}
	t += key.Name
	if sub != "" {
		t += "/" + sub
	}
	return t
}

// newKillRand is the random source of crash's p draws for a seed.
func newKillRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed ^ 0x6b111)) }
