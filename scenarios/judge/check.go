package judge

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
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

	ops     []porcupine.Operation
	info    porcupine.LinearizationInfo // computed by visualization
	infoSet bool
	history History // as judged (with Judge's LogWrites)
}

// History is the history r judged: the runner's facts and recorded calls,
// with the writes Judge read from the event log (LogWrites).
func (r *Result) History() History { return r.history }

// OK reports whether the history passed every check.
func (r *Result) OK() bool { return r.Linearizable == porcupine.Ok && len(r.Violations) == 0 }

// Failed names the checks that failed: "porcupine" and the invariants.
func (r *Result) Failed() []string {
	var out []string
	if r.Linearizable != porcupine.Ok {
		out = append(out, "porcupine")
	}
	for _, v := range r.Violations {
		if !slices.Contains(out, v.Check) {
			out = append(out, v.Check)
		}
	}
	return out
}

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
// plain invariants. Judge is Check for a runner's input.
func Check(h History) *Result { return check(h, nil) }

func check(h History, upgrades []UpgradeSpec) *Result {
	steps, ops := Operations(h)
	res := porcupine.CheckOperationsTimeout(Model, ops, CheckTimeout)
	r := &Result{Linearizable: res, ops: ops, Violations: invariants(h, upgrades), history: h}
	if h.Incomplete != "" {
		r.Violations = append([]Violation{{CheckComplete, h.Incomplete}}, r.Violations...)
	}
	if res != porcupine.Ok {
		r.Illegal = explain(steps)
	}
	return r
}

// Operations turns a history into porcupine operations on one timeline:
// resourceVersions, which one etcd (or the simulator's store) assigns in
// commit order, so facts that arrived late through a watch still fall in
// place. With slot(rv) = 4·rv·slotWidth:
//   - a fact group (the facts of one resourceVersion) is the point slot(rv);
//   - a call that committed a change (its result's resourceVersion is newer
//     than every fact recorded before the call) spans slot(rv) ± slotWidth·1,
//     its linearization point — and the facts its write produced on the same
//     Deployment are left to it, so the model judges the write itself;
//     A status write (a claim) spans from just after the facts its
//     reconcile's first call could read: what it claims was observed
//     then or later;
//   - any other call (a read, a failure, a no-op write) changes nothing and
//     is legal in any state; it is placed at a point of its own after the
//     newest fact recorded before it returned, in the order the calls
//     returned, so the history stays nearly sequential and the check fast
//     even when it fails (such calls are shown, they constrain nothing).
//
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
	slot := func(rv uint64) int64 { return 4 * int64(rv) * slotWidth }
	type placed struct {
		s         step
		call, ret int64
		client    int
	}
	var all []placed
	// keys are "rv/<eventlog.WorkloadKey>"
	written := map[string]string{} // the template hash a DeploymentWrite fact committed
	own := map[string][]Fact{}     // the Deployment* facts of a workload at one rv
	for _, f := range h.Facts {
		if !strings.HasPrefix(f.Event.Event, "Deployment") {
			continue
		}
		k := f.RV + "/" + f.WorkloadKey()
		if f.Event.Event == eventlog.DeploymentWrite {
			written[k] = f.HashAfter
		}
		own[k] = append(own[k], f)
	}
	owned := map[string]bool{}  // written by an operator call
	others := map[int64]int64{} // calls placed in a slot so far
	seen := observedFrom(h.Ops)
	for i := range h.Ops {
		op := &h.Ops[i]
		rv, err := strconv.ParseUint(op.RV, 10, 64)
		p := placed{s: step{op: op}, client: 3 + op.Replica}
		k := op.RV + "/" + workloadKeyOf(op)
		switch {
		case op.FromLog && err == nil:
			// a write the log shows and no call recorded: at its rv
			// whatever order the facts arrived in, judged before its facts
			p.call, p.ret = slot(rv)-slotWidth, slot(rv)+slotWidth
			p.s.facts, owned[k] = own[k], true
		case op.OK() && op.Write() && err == nil && rv > before(op.CallSeq):
			p.call, p.ret = slot(rv)-slotWidth, slot(rv)+slotWidth
			if isWorkload(op.Kind) {
				owned[k] = true
				p.s.hash = written[k]
			}
			if first, ok := seen[reconcileOf(op)]; ok && isStatusClaim(op) && before(first) < rv {
				// a status claim says what its reconcile observed: it may
				// hold anywhere from the reconcile's first read (a person
				// may edit a workload meanwhile) to its commit
				p.call = slot(before(first)) + 1
			}
		default:
			base := slot(before(op.ReturnSeq)) + 2*slotWidth
			others[base]++
			p.call, p.ret = base+others[base], base+others[base]
		}
		all = append(all, p)
	}
	groups := map[uint64][]Fact{}
	for i, f := range h.Facts {
		if owned[f.RV+"/"+f.WorkloadKey()] && strings.HasPrefix(f.Event.Event, "Deployment") {
			continue
		}
		groups[factRV[i]] = append(groups[factRV[i]], f)
	}
	for rv, facts := range groups {
		all = append(all, placed{s: step{facts: facts}, call: slot(rv), ret: slot(rv), client: factClient(facts[0])})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].call < all[j].call })
	steps := make([]step, len(all))
	ops := make([]porcupine.Operation, len(all))
	for i, p := range all {
		steps[i] = p.s
		ops[i] = porcupine.Operation{ClientId: p.client, Input: p.s, Call: p.call, Return: p.ret}
	}
	return steps, ops
}

// reconcileOf names the reconcile op belongs to: its replica and number.
func reconcileOf(op *Op) [2]int { return [2]int{op.Replica, op.Reconcile} }

// isStatusClaim says whether op writes an ApplicationUpgrade's status.
func isStatusClaim(op *Op) bool { return op.Kind == "ApplicationUpgrade" && op.Sub == "status" }

// observedFrom is, per reconcile, the CallSeq of its first call: what
// it decided from was read from then on.
func observedFrom(ops []Op) map[[2]int]int64 {
	out := map[[2]int]int64{}
	for i := range ops {
		op := &ops[i]
		if op.Reconcile == 0 {
			continue
		}
		if first, ok := out[reconcileOf(op)]; !ok || op.CallSeq < first {
			out[reconcileOf(op)] = op.CallSeq
		}
	}
	return out
}

// slotWidth leaves room for a million calls between two resourceVersions.
const slotWidth = 1 << 20

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
