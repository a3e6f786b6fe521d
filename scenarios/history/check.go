package history

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// CheckTimeout bounds porcupine's search; a history it cannot decide in
// time fails the check (Unknown is not a pass).
const CheckTimeout = 30 * time.Second

// Result is the verdict on one history.
type Result struct {
	// Linearizable is porcupine's verdict on Model.
	Linearizable porcupine.CheckResult
	// Illegal explains the first illegal step of a sequential replay
	// when Linearizable is not Ok.
	Illegal string
	// Violations are the plain invariants that failed.
	Violations []Violation

	ops  []porcupine.Operation
	info porcupine.LinearizationInfo
}

// OK reports whether the history passed every check.
func (r *Result) OK() bool { return r.Linearizable == porcupine.Ok && len(r.Violations) == 0 }

// Err summarises every failed check, or nil.
func (r *Result) Err() error {
	var errs []error
	if r.Linearizable != porcupine.Ok {
		errs = append(errs, fmt.Errorf("porcupine: history is %s under the ordering model: %s", r.Linearizable, r.Illegal))
	}
	for _, v := range r.Violations {
		errs = append(errs, fmt.Errorf("invariant %s: %s", v.Check, v.Message))
	}
	return errors.Join(errs...)
}

// Check judges h: porcupine.CheckOperationsVerbose with Model, and the
// plain invariants.
func Check(h History) *Result {
	steps, ops := Operations(h)
	res, info := porcupine.CheckOperationsVerbose(Model, ops, CheckTimeout)
	r := &Result{Linearizable: res, ops: ops, info: info, Violations: Invariants(h)}
	if res != porcupine.Ok {
		r.Illegal = explain(steps)
	}
	return r
}

// Operations turns a history into porcupine operations on one timeline:
// resourceVersions, which one etcd (or the simulator's store) assigns in
// commit order, so facts that arrived late through a watch still fall in
// place. A fact group (the facts of one resourceVersion) is the point
// 4·rv. A call that committed a change (its result's resourceVersion is
// newer than every fact recorded before the call) is [4·rv−1, 4·rv+1], and
// the facts its own write produced on the same Deployment are left to it.
// Any other call (reads, failures, no-op writes) spans from the newest fact
// recorded before it was made to the newest recorded before it returned.
// Steps are returned in timeline order.
func Operations(h History) ([]step, []porcupine.Operation) {
	factRV := make([]uint64, len(h.Facts))
	seqs := make([]int64, len(h.Facts))
	for i, f := range h.Facts {
		factRV[i], _ = strconv.ParseUint(f.RV, 10, 64)
		seqs[i] = f.Seq
	}
	// newest[i] is the largest resourceVersion among facts[0..i].
	newest := make([]uint64, len(h.Facts))
	for i, rv := range factRV {
		newest[i] = rv
		if i > 0 && newest[i-1] > rv {
			newest[i] = newest[i-1]
		}
	}
	before := func(seq int64) uint64 {
		i := sort.Search(len(seqs), func(i int) bool { return seqs[i] >= seq })
		if i == 0 {
			return 0
		}
		return newest[i-1]
	}
	type placed struct {
		s         step
		call, ret int64
		client    int
		tiebreak  int64
	}
	var all []placed
	owned := map[string]bool{} // "rv/deployment" written by an operator call
	for i := range h.Ops {
		op := &h.Ops[i]
		rv, err := strconv.ParseUint(op.RV, 10, 64)
		p := placed{s: step{op: op}, client: 3 + op.Replica, tiebreak: op.CallSeq}
		if op.OK() && op.Write() && err == nil && rv > before(op.CallSeq) {
			p.call, p.ret = 4*int64(rv)-1, 4*int64(rv)+1
			if op.Kind == "Deployment" {
				owned[op.RV+"/"+op.Name] = true
			}
		} else {
			p.call, p.ret = 4*int64(before(op.CallSeq))+2, 4*int64(before(op.ReturnSeq))+3
		}
		all = append(all, p)
	}
	groups := map[uint64][]Fact{}
	for i, f := range h.Facts {
		if owned[f.RV+"/"+f.Name] && (strings.HasPrefix(f.Event.Event, "Deployment")) {
			continue
		}
		groups[factRV[i]] = append(groups[factRV[i]], f)
	}
	for rv, facts := range groups {
		all = append(all, placed{s: step{facts: facts}, call: 4 * int64(rv), ret: 4 * int64(rv), client: factClient(facts[0]), tiebreak: facts[0].Seq})
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].call != all[j].call {
			return all[i].call < all[j].call
		}
		return all[i].tiebreak < all[j].tiebreak
	})
	steps := make([]step, len(all))
	ops := make([]porcupine.Operation, len(all))
	for i, p := range all {
		steps[i] = p.s
		ops[i] = porcupine.Operation{ClientId: p.client, Input: p.s, Call: p.call, Return: p.ret}
	}
	return steps, ops
}

// factClient lays facts out in the visualization: Deployments on row 0,
// pods on row 1, upgrades on row 2; operator replicas from row 3.
func factClient(f Fact) int {
	switch {
	case strings.HasPrefix(f.Event.Event, "Deployment"):
		return 0
	case strings.HasPrefix(f.Event.Event, "Pod"):
		return 1
	}
	return 2
}

// explain replays steps sequentially in timeline order and describes the
// first illegal one.
func explain(steps []step) string {
	w := Model.Init().(*world)
	for _, s := range steps {
		ok, why, next := judge(w, s)
		if !ok {
			return fmt.Sprintf("%s: %s", describeStep(s), why)
		}
		w = next
	}
	return "no single illegal step in timeline order (see the visualization)"
}
