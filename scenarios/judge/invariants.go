package judge

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Violation is one failed plain invariant.
type Violation struct {
	Check   string
	Message string
}

// Names of the plain invariants.
const (
	CheckOrdering      = "ordering"
	CheckOneWrite      = "one-write-per-image"
	CheckPhaseMonotone = "phase-monotone"
	CheckSingleWriter  = "single-writer"
	// CheckComponentTerminal: a Failed or Blocked component stays so
	// within a generation.
	CheckComponentTerminal = "component-terminal"
	// CheckComplete fails a history taken before the watch caught up.
	CheckComplete = "complete-history"
)

// Invariants checks h beside the porcupine model:
//   - ordering: Ordering for every dependency edge of an upgrade's
//     graph (the dependency as the callee, the dependent as the caller;
//     for v1alpha1 the worker/API pair): no component's image is written
//     while an old pod of a component it depends on exists;
//   - one-write-per-image: the operator set a Deployment's template to the
//     same images at most once for one generation of an upgrade (a spec
//     changed to another image and back writes it again; an upgrade
//     deleted and created again counts afresh: UpgradeDeleted facts);
//   - phase-monotone: within one generation of an upgrade, its phases never
//     go back (Pending < UpgradingWorkers < WaitingForWorkers < UpgradingAPI
//     < WaitingForAPI < Completed; v1beta1 Pending < Progressing <
//     Completed) and nothing follows Completed or Failed — except the
//     recovery of a rollout failure (Failed → a phase past Pending), a
//     component's image reverted by someone else (reverts), and
//     UpgradingAPI → WaitingForWorkers after a pod of the worker was
//     created or deleted since UpgradingAPI (losses);
//   - component-terminal: within one generation, a component that is
//     Failed or Blocked never changes phase again, except a recovery
//     (Failed → Rolled, Blocked → Pending / Upgrading);
//   - single-writer: once a second operator process has written, the
//     first never writes again.
func Invariants(h History) []Violation { return invariants(h, nil) }

// invariants are Invariants with the ordering also checked on every edge
// of upgrades (Input.Upgrades).
func invariants(h History, upgrades []UpgradeSpec) []Violation {
	var out []Violation
	ordered := Ordered(h.Events())
	for _, p := range pairs(h, upgrades) {
		for _, v := range Ordering(ordered, p).Violations {
			out = append(out, Violation{CheckOrdering, v})
		}
	}
	out = append(out, oneWritePerImage(h)...)
	graphs := upgradeGraphs(h, upgrades)
	out = append(out, phaseMonotone(ordered, reverts(ordered, graphs), losses(ordered, graphs))...)
	out = append(out, componentTerminal(ordered)...)
	return append(out, singleWriter(h.Ops)...)
}

// pairs are the dependency edges of the graphs the reconciles read and of
// upgrades, as callee (Worker) / caller (API) pairs with their kinds,
// sorted.
func pairs(h History, upgrades []UpgradeSpec) []Pair {
	seen := map[Pair]bool{}
	var out []Pair
	for _, g := range upgradeGraphs(h, upgrades) {
		upgradeNS := g.ns
		for _, c := range g.u.Graph() {
			for _, d := range c.DependsOn {
				dep, ok := g.u.Component(d)
				if !ok {
					continue
				}
				p := Pair{Namespace: cmp.Or(c.Namespace, upgradeNS), Worker: dep.Deployment, API: c.Deployment,
					WorkerKind: dep.Kind, APIKind: c.Kind}
				if ns := cmp.Or(dep.Namespace, upgradeNS); ns != p.Namespace {
					p.WorkerNamespace = ns
				}
				if !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

// upgradeGraphs are upgrades and the graphs h's recorded reconciles read,
// each in its upgrade's namespace.
func upgradeGraphs(h History, upgrades []UpgradeSpec) []graph {
	graphs := graphsOf(upgrades)
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Upgrade == nil || op.Namespace == "" {
			continue
		}
		// the upgrade's namespace: the reconciled request's (a Deployment
		// call's own namespace may be another component's)
		graphs = append(graphs, graph{op.Upgrade, upgradeNamespace(op)})
	}
	return graphs
}

// reverts are, per upgrade ("namespace/name"), the indexes in events of
// the template writes that took one of its components' target image back
// out of the component's workload: the template carried the target before
// the write and does not after (a GitOps tool re-applying Git, a person).
// The operator reports such a revert by moving the upgrade back
// (docs/gitops.md: the component Reverted, a v1alpha1 phase before the
// API's, Completed → Progressing), so phaseMonotone excuses a move back
// that follows one.
func reverts(events []eventlog.Event, graphs []graph) map[string][]int {
	type target struct{ upgrade, image string }
	targets := map[string][]target{} // workload key → the components on it
	for _, g := range graphs {
		for _, c := range g.u.Graph() {
			k := c.key(g.ns)
			t := target{g.ns + "/" + g.u.Name, c.Image}
			if !slices.Contains(targets[k], t) {
				targets[k] = append(targets[k], t)
			}
		}
	}
	out := map[string][]int{}
	if len(targets) == 0 {
		return out
	}
	last := map[string][]string{} // workload key → its template's images
	for i, e := range events {
		if e.Event != eventlog.DeploymentWrite {
			continue
		}
		k := eventlog.WorkloadKey(e.Kind, e.Namespace, e.Name)
		before, seen := last[k]
		now := imagesOfFact(e)
		last[k] = now
		if !seen {
			continue
		}
		for _, t := range targets[k] {
			if slices.Contains(before, t.image) && !slices.Contains(now, t.image) {
				out[t.upgrade] = append(out[t.upgrade], i)
			}
		}
	}
	return out
}

// losses are, per upgrade ("namespace/name"), the indexes in events of
// the pod events (a pod created, terminating or deleted) of a workload
// one of its components depends on. A dependency the operator judged
// fully rolled out can stop being so before its dependent's image is
// written: a node lost, a pod evicted, a scale-up. The operator then says
// so (appupgrade.ReasonDependencyNotDone: the dependent back to Pending,
// the v1alpha1 phase from UpgradingAPI back to WaitingForWorkers) and
// writes only once the dependency is rolled out again, which the
// porcupine model judges; phaseMonotone excuses that one move back after
// such an event (simulate --seed 121, node-lost with a gap).
func losses(events []eventlog.Event, graphs []graph) map[string][]int {
	deps := map[string][]string{} // workload key → the upgrades depending on it
	for _, g := range graphs {
		for _, c := range g.u.Graph() {
			for _, d := range c.DependsOn {
				dc, ok := g.u.Component(d)
				if !ok {
					continue
				}
				k, u := dc.key(g.ns), g.ns+"/"+g.u.Name
				if !slices.Contains(deps[k], u) {
					deps[k] = append(deps[k], u)
				}
			}
		}
	}
	out := map[string][]int{}
	for i, e := range events {
		switch e.Event {
		case eventlog.PodCreated, eventlog.PodDeleting, eventlog.PodDeleted:
			for _, u := range deps[eventlog.WorkloadKey(e.Kind, e.Namespace, e.Deployment)] {
				out[u] = append(out[u], i)
			}
		}
	}
	return out
}

// anyBetween says whether one of the indexes in at lies in (from, to).
func anyBetween(at []int, from, to int) bool {
	for _, i := range at {
		if i > from && i < to {
			return true
		}
	}
	return false
}

// SuccessfulWrites returns the operator's successful workload writes
// (Deployments, StatefulSets, DaemonSets).
func SuccessfulWrites(ops []Op) []Op {
	var out []Op
	for _, op := range ops {
		if isWorkload(op.Kind) && op.Write() && op.OK() {
			out = append(out, op)
		}
	}
	return out
}

func oneWritePerImage(h History) []Violation {
	// an upgrade deleted and created again is another object: its writes
	// count afresh (it finds the template as others left it)
	deleted := map[string][]int64{} // namespace/name → the seqs of its UpgradeDeleted facts
	for _, f := range h.Facts {
		if f.Event.Event == eventlog.UpgradeDeleted {
			k := eventlog.Key(f.Namespace, f.Name)
			deleted[k] = append(deleted[k], f.Seq)
		}
	}
	count := map[string]int{}
	var out []Violation
	for _, op := range SuccessfulWrites(h.Ops) {
		if op.FromLog {
			continue // a write the log shows: no call, so nothing to count twice
		}
		k := op.Namespace + "/" + op.Name + " = " + strings.Join(op.Images, ",")
		lives := 0
		for _, seq := range deleted[op.Request] {
			if seq < op.CallSeq {
				lives++
			}
		}
		gen := int64(0)
		if op.Upgrade != nil {
			gen = op.Upgrade.Generation
		}
		life := fmt.Sprintf("%s %s %d %d", k, op.Request, lives, gen)
		count[life]++
		if count[life] == 2 {
			out = append(out, Violation{CheckOneWrite, fmt.Sprintf("deployment %s written a second time at t=%.3fs (op #%d)", k, op.Call, op.ID)})
		}
	}
	return out
}

var phaseRank = map[string]int{
	string(upgradesv1alpha1.PhasePending):           1,
	string(upgradesv1alpha1.PhaseUpgradingWorkers):  2,
	string(upgradesv1alpha1.PhaseWaitingForWorkers): 3,
	string(upgradesv1alpha1.PhaseUpgradingAPI):      4,
	string(upgradesv1alpha1.PhaseWaitingForAPI):     5,
	string(upgradesv1alpha1.PhaseCompleted):         6,
	string(upgradesv1alpha1.PhaseFailed):            6,
	string(v1beta1.PhaseProgressing):                3,
}

// componentTerminal: within one generation, nothing follows a component's
// Failed or Blocked.
func componentTerminal(events []eventlog.Event) []Violation {
	type last struct {
		phase string
		gen   int64
	}
	// First pass: the upgrades (and generations) in which a component
	// recovered from Failed to Rolled; only there may a Blocked dependent
	// move again.
	recovered := map[string]bool{}
	prev := map[string]last{}
	for _, e := range events {
		if e.Event == eventlog.UpgradeDeleted {
			forget(prev, e)
			continue
		}
		if e.Event != eventlog.ComponentPhase {
			continue
		}
		comp, phase := eventlog.ComponentOf(e)
		key := e.Namespace + "/" + e.Name + "/" + comp
		if p, seen := prev[key]; seen && p.gen == e.Generation && p.phase == string(v1beta1.ComponentFailed) && phase == string(v1beta1.ComponentRolled) {
			recovered[fmt.Sprintf("%s/%s@%d", e.Namespace, e.Name, e.Generation)] = true
		}
		prev[key] = last{phase, e.Generation}
	}
	prev = map[string]last{}
	var out []Violation
	for _, e := range events {
		if e.Event == eventlog.UpgradeDeleted {
			forget(prev, e)
			continue
		}
		if e.Event != eventlog.ComponentPhase {
			continue
		}
		comp, phase := eventlog.ComponentOf(e)
		key := e.Namespace + "/" + e.Name + "/" + comp
		p, seen := prev[key]
		prev[key] = last{phase, e.Generation}
		if !seen || e.Generation != p.gen || phase == p.phase || unknownGeneration(p.gen, e.Generation, phase) {
			continue
		}
		if recovery(p.phase, phase, recovered[fmt.Sprintf("%s/%s@%d", e.Namespace, e.Name, e.Generation)]) {
			continue
		}
		if p.phase == string(v1beta1.ComponentFailed) || p.phase == string(v1beta1.ComponentBlocked) {
			out = append(out, Violation{CheckComponentTerminal, fmt.Sprintf("component %s of upgrade %s/%s left %s for %s in generation %d at t=%.3fs",
				comp, e.Namespace, e.Name, p.phase, phase, e.Generation, e.T)})
		}
	}
	return out
}

// forget drops from prev ("namespace/name/component" keys) every
// component of the upgrade e (an UpgradeDeleted event) names.
func forget[V any](prev map[string]V, e eventlog.Event) {
	prefix := e.Namespace + "/" + e.Name + "/"
	for k := range prev {
		if strings.HasPrefix(k, prefix) {
			delete(prev, k)
		}
	}
}

// recovery reports whether a component's move from prev to next is the
// recovery of a rollout failure: Failed → Rolled (its Deployment was
// observed fully rolled out at target), or, in an upgrade where a
// component so recovered, a dependent Blocked by it → Pending / Upgrading.
func recovery(prev, next string, upgradeRecovered bool) bool {
	switch prev {
	case string(v1beta1.ComponentFailed):
		return next == string(v1beta1.ComponentRolled)
	case string(v1beta1.ComponentBlocked):
		return upgradeRecovered && (next == string(v1beta1.ComponentPending) || next == string(v1beta1.ComponentUpgrading))
	}
	return false
}

// unknownGeneration says whether a move to phase may start a new
// generation the log cannot show: a plain event log (not a detailed one)
// records no generation (0), so a return to Pending — what a spec change,
// or a deleted and recreated upgrade, starts with — is not judged.
func unknownGeneration(prev, next int64, phase string) bool {
	return prev == 0 && next == 0 && phase == string(upgradesv1alpha1.PhasePending)
}

// phaseMonotone checks the upgrades' Phase events (see Invariants);
// reverts (per upgrade, indexes in events) excuse a move back that follows
// one, losses a move from UpgradingAPI back to WaitingForWorkers that
// follows one. An UpgradeDeleted event starts the upgrade's phases afresh.
func phaseMonotone(events []eventlog.Event, reverts, losses map[string][]int) []Violation {
	type last struct {
		phase string
		gen   int64
		at    int
	}
	prev := map[string]last{}
	var out []Violation
	for i, e := range events {
		key := e.Namespace + "/" + e.Name
		if e.Event == eventlog.UpgradeDeleted {
			delete(prev, key)
			continue
		}
		if e.Event != eventlog.Phase {
			continue
		}
		p, seen := prev[key]
		prev[key] = last{e.Phase, e.Generation, i}
		if !seen || e.Generation != p.gen || unknownGeneration(p.gen, e.Generation, e.Phase) {
			continue
		}
		switch {
		case anyBetween(reverts[key], p.at, i) && e.Phase != string(upgradesv1alpha1.PhaseFailed):
			// A component's image was reverted since the last phase: the
			// operator reports it by moving back (docs/gitops.md); the
			// porcupine model judges the writes and claims that follow.
		case p.phase == string(upgradesv1alpha1.PhaseUpgradingAPI) && e.Phase == string(upgradesv1alpha1.PhaseWaitingForWorkers) &&
			anyBetween(losses[key], p.at, i):
			// The worker lost or gained a pod after it was judged rolled
			// out and before the API's image was written (losses).
		case p.phase == string(upgradesv1alpha1.PhaseFailed) && e.Phase != string(upgradesv1alpha1.PhasePending):
			// A rollout failure recovered (appupgrade.ReasonRecovered): the
			// porcupine model judges the writes that follow.
		case p.phase == string(upgradesv1alpha1.PhaseCompleted) || p.phase == string(upgradesv1alpha1.PhaseFailed):
			out = append(out, Violation{CheckPhaseMonotone, fmt.Sprintf("upgrade %s left %s for %s in generation %d at t=%.3fs", key, p.phase, e.Phase, e.Generation, e.T)})
		case phaseRank[e.Phase] < phaseRank[p.phase] && p.gen == 0 && e.Generation == 0:
			// A plain event log (no generations, no component phases) of a
			// v1alpha1 view: a revert of a written image (gitops-revert,
			// phase Reverted) moves it back by design (docs/gitops.md) and
			// the log cannot tell that from a regression; the porcupine
			// model judges every write and claim that follows.
		case phaseRank[e.Phase] < phaseRank[p.phase]:
			out = append(out, Violation{CheckPhaseMonotone, fmt.Sprintf("upgrade %s went back from %s to %s in generation %d at t=%.3fs", key, p.phase, e.Phase, e.Generation, e.T)})
		}
	}
	return out
}

func singleWriter(ops []Op) []Violation {
	var order []int // replicas in the order they first wrote
	done := map[int]bool{}
	var out []Violation
	sorted := append([]Op(nil), ops...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ReturnSeq < sorted[j].ReturnSeq })
	for _, op := range sorted {
		if !op.Write() || !op.OK() || op.FromLog {
			continue
		}
		if len(order) == 0 || order[len(order)-1] != op.Replica {
			if done[op.Replica] {
				out = append(out, Violation{CheckSingleWriter, fmt.Sprintf("operator replica %d wrote again at t=%.3fs (op #%d) after replica %d had taken over", op.Replica, op.Call, op.ID, order[len(order)-1])})
			}
			if len(order) > 0 {
				done[order[len(order)-1]] = true
			}
			order = append(order, op.Replica)
		}
	}
	return out
}
