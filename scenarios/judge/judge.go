package judge

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Input is what a runner hands the judge: the event log (always), the
// operator's calls where the runner records them, and the upgrades' graphs
// as the runner last read them.
type Input struct {
	// History holds the facts (the event log) and, where the runner
	// records them (the features' backends: Recorder), the operator's
	// calls. FromEvents turns a bare event log into one.
	History History
	// Upgrades are the graphs of the run's upgrades (SpecOf, Namespace
	// set), the ones the runner read at the end. Recorded calls add the
	// graphs their reconciles read.
	Upgrades []UpgradeSpec
}

// SpecsOf are the graphs of upgrades (at v1beta1, the hub) for Input.Upgrades.
func SpecsOf(upgrades []upgradesv1beta1.ApplicationUpgrade) []UpgradeSpec {
	out := make([]UpgradeSpec, len(upgrades))
	for i := range upgrades {
		out[i] = *specOf(&upgrades[i])
	}
	return out
}

// FromEvents is a History of an event log alone: one fact per event, in
// log order, and no recorded calls.
func FromEvents(events []eventlog.Event) History {
	h := History{Facts: make([]Fact, len(events))}
	for i, e := range events {
		h.Facts[i] = Fact{Event: e, Seq: int64(i + 1)}
	}
	return h
}

// Judge is the one verdict every runner asks for: porcupine's check of
// Model (linearizability of the operator's writes and status claims
// against the cluster's facts), the plain invariants (Invariants) and the
// per-edge ordering (Ordering on every dependency edge of
// in.Upgrades and of the graphs the recorded reconciles read, kinds
// included).
//
// The operator's template writes the log shows and no recorded call
// accounts for — every write when the runner records no calls, or the
// writes of a process it did not instrument — are judged as writes of the
// operator (Op.FromLog, LogWrites): a DeploymentWrite fact rewriting a
// workload's container to a component's target image is legal only while
// the component's dependencies are fully rolled out, like a recorded call.
func Judge(in Input) *Result {
	h := in.History
	if extra := LogWrites(h, in.Upgrades); len(extra) > 0 {
		h.Ops = append(slices.Clip(h.Ops), extra...)
	}
	if extra := LogClaims(h, in.Upgrades); len(extra) > 0 {
		h.Ops = append(slices.Clip(h.Ops), extra...)
	}
	return check(h, in.Upgrades)
}

// LogWrites are the ops standing for the operator's template writes that
// h's facts show and its calls do not: every DeploymentWrite fact after a
// workload's creation that writes a component's target image (of upgrades,
// or of a graph a recorded reconcile read) and whose resourceVersion no
// successful recorded write of that workload returned. One op per workload
// and resourceVersion, FromLog set, its Upgrade the graph naming that
// target.
func LogWrites(h History, upgrades []UpgradeSpec) []Op {
	graphs := graphsOf(upgrades)
	recorded := map[string]bool{} // "rv/workload key" of recorded writes
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Upgrade != nil {
			graphs = append(graphs, graph{op.Upgrade, upgradeNamespace(op)})
		}
		if op.OK() && op.Write() && isWorkload(op.Kind) {
			recorded[op.RV+"/"+workloadKeyOf(op)] = true
		}
	}
	if len(graphs) == 0 {
		return nil
	}
	seen := map[string]bool{} // workloads created
	done := map[string]bool{} // "rv/workload key" already turned into an op
	var out []Op
	for _, f := range orderedFacts(h.Facts) {
		if f.Event.Event != eventlog.DeploymentWrite {
			continue
		}
		key := f.WorkloadKey()
		if !seen[key] {
			seen[key] = true // the creation: the initial state, not a write
			continue
		}
		k := f.RV + "/" + key
		if f.Image == "" || recorded[k] || done[k] || !operatorsImage(f.ImageOwner) {
			continue
		}
		for _, g := range graphs {
			c, ok := g.u.componentOn(f.Kind, f.Namespace, f.Name, g.ns)
			if !ok || c.Image != f.Image {
				continue
			}
			done[k] = true
			kind := cmp.Or(f.Kind, "Deployment")
			u := *g.u
			u.Namespace = g.ns
			out = append(out, Op{ID: len(h.Ops) + len(out) + 1, Verb: "update", Kind: kind, Namespace: f.Namespace, Name: f.Name,
				Call: f.T, Return: f.T, CallSeq: f.Seq, ReturnSeq: f.Seq, RV: f.RV, Images: imagesOfFact(f.Event), Upgrade: &u, FromLog: true})
			break
		}
	}
	return out
}

// operatorsImage says whether a DeploymentWrite whose image the field
// managers owner own (eventlog.Event.ImageOwner) may be the operator's: it
// is among them, or the log does not say.
func operatorsImage(owner string) bool {
	return owner == "" || slices.Contains(strings.Split(owner, ","), appupgrade.FieldManager)
}

// LogClaims are the ops standing for the operator's status claims that
// h's facts show and its calls do not: for each upgrade of upgrades with
// no recorded status write, every resourceVersion at which its Phase or a
// ComponentPhase fact changed becomes one status op (FromLog) carrying the
// phases before and after, so the model judges what the status claimed
// (Completed while a component is not rolled out) for a runner that
// records no calls (an operator out of process, make demo). One op per
// upgrade and resourceVersion.
func LogClaims(h History, upgrades []UpgradeSpec) []Op {
	recorded := map[string]bool{} // namespace/name of upgrades with a recorded status write
	for i := range h.Ops {
		if op := &h.Ops[i]; isStatusClaim(op) && op.Write() {
			recorded[eventlog.Key(upgradeNamespace(op), op.Name)] = true
		}
	}
	specs := map[string][]*UpgradeSpec{} // by namespace/name, each generation known
	for i := range upgrades {
		u := &upgrades[i]
		if k := eventlog.Key(u.Namespace, u.Name); !recorded[k] {
			specs[k] = append(specs[k], u)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	now := map[string]logStatus{}
	var out []Op
	var open *Op // the claim of the resourceVersion being read
	for _, f := range orderedFacts(h.Facts) {
		k := eventlog.Key(f.Namespace, f.Name)
		if _, ok := specs[k]; !ok {
			continue
		}
		switch f.Event.Event {
		case eventlog.UpgradeDeleted:
			delete(now, k)
			open = nil
			continue
		case eventlog.Phase, eventlog.ComponentPhase:
		default:
			continue
		}
		st := now[k]
		// the spec of the generation the line is about: a claim of a
		// generation whose spec is not known is not judged (its targets
		// are not known), though it still moves the phases
		i := slices.IndexFunc(specs[k], func(u *UpgradeSpec) bool { return u.Generation == f.Generation })
		if i < 0 {
			now[k] = claimed(st, f)
			open = nil
			continue
		}
		u := specs[k][i]
		if open == nil || open.RV != f.RV || open.Name != f.Name || open.Namespace != f.Namespace {
			spec := *u
			out = append(out, Op{ID: len(h.Ops) + len(out) + 1, Verb: "patch", Kind: "ApplicationUpgrade", Sub: "status",
				Namespace: f.Namespace, Name: f.Name, Call: f.T, Return: f.T, CallSeq: f.Seq, ReturnSeq: f.Seq, RV: f.RV,
				Phase: st.phase, PrevPhase: st.phase, Components: maps.Clone(st.components), PrevComponents: maps.Clone(st.components),
				Upgrade: &spec, FromLog: true})
			open = &out[len(out)-1]
			if open.Components == nil {
				open.Components = map[string]string{}
			}
		}
		if f.Event.Event == eventlog.Phase && alphaOnly(f.Phase) && len(u.Graph()) != 2 {
			// a v1alpha1 view of a graph v1alpha1 cannot say (a recorder
			// watching v1alpha1): its components say it
			continue
		}
		st = claimed(st, f)
		open.Phase = st.phase
		if f.Event.Event == eventlog.ComponentPhase {
			c, phase := eventlog.ComponentOf(f.Event)
			open.Components[c] = phase
		}
		now[k] = st
	}
	return out
}

// logStatus is an upgrade's phases as its log's lines said them so far.
type logStatus struct {
	phase      string
	components map[string]string
}

// claimed is st after f, a Phase or ComponentPhase line.
func claimed(st logStatus, f Fact) logStatus {
	if f.Event.Event == eventlog.Phase {
		st.phase = f.Phase
		return st
	}
	c, phase := eventlog.ComponentOf(f.Event)
	st.components = maps.Clone(st.components)
	if st.components == nil {
		st.components = map[string]string{}
	}
	st.components[c] = phase
	return st
}

// alphaOnly says whether phase is one of v1alpha1's own phases, between
// Pending and Completed.
func alphaOnly(phase string) bool {
	switch upgradesv1alpha1.Phase(phase) {
	case upgradesv1alpha1.PhaseUpgradingWorkers, upgradesv1alpha1.PhaseWaitingForWorkers, upgradesv1alpha1.PhaseUpgradingAPI, upgradesv1alpha1.PhaseWaitingForAPI:
		return true
	}
	return false
}

// orderedFacts are facts in resourceVersion order where every one has a
// numeric resourceVersion (eventlog.Ordered), else as recorded.
func orderedFacts(facts []Fact) []Fact {
	out := slices.Clone(facts)
	for _, f := range out {
		if _, err := strconv.ParseUint(f.RV, 10, 64); err != nil {
			return out
		}
	}
	slices.SortStableFunc(out, func(a, b Fact) int {
		x, _ := strconv.ParseUint(a.RV, 10, 64)
		y, _ := strconv.ParseUint(b.RV, 10, 64)
		return cmp.Compare(x, y)
	})
	return out
}

// imagesOfFact is every container's image of a DeploymentWrite.
func imagesOfFact(e eventlog.Event) []string {
	switch {
	case len(e.Images) > 0:
		return e.Images
	case len(e.Containers) > 0:
		out := make([]string, len(e.Containers))
		for i, c := range e.Containers {
			out[i] = c.Image
		}
		return out
	}
	return []string{e.Image}
}

// Summary is one line for a verdict: "OK", or the failed checks and the
// first reason.
func (r *Result) Summary() string {
	if r.OK() {
		return "OK"
	}
	if r.Linearizable != porcupine.Ok && r.Illegal != "" {
		return fmt.Sprintf("porcupine: %s", r.Illegal)
	}
	if len(r.Violations) > 0 {
		return fmt.Sprintf("%s: %s", r.Violations[0].Check, r.Violations[0].Message)
	}
	return fmt.Sprintf("porcupine: history is %s under the ordering model", r.Linearizable)
}

// Lines are r's failures one a line, "porcupine: ..." and "<check>: ...",
// leaving out the invariants named in skip (a runner that reports the
// per-edge ordering by itself skips CheckOrdering).
func (r *Result) Lines(skip ...string) []string {
	var out []string
	if r.Linearizable != porcupine.Ok {
		out = append(out, fmt.Sprintf("porcupine: history is %s under the ordering model: %s", r.Linearizable, r.Illegal))
	}
	for _, v := range r.Violations {
		if !slices.Contains(skip, v.Check) {
			out = append(out, v.Check+": "+v.Message)
		}
	}
	return out
}

// AlphaSpecs are the graphs of v1alpha1 upgrades (converted to the hub)
// for Input.Upgrades; an upgrade that does not convert is left out.
func AlphaSpecs(upgrades []upgradesv1alpha1.ApplicationUpgrade) []UpgradeSpec {
	var out []UpgradeSpec
	for i := range upgrades {
		hub := &upgradesv1beta1.ApplicationUpgrade{}
		if err := upgrades[i].ConvertTo(hub); err == nil {
			out = append(out, *specOf(hub))
		}
	}
	return out
}

// JudgeEvents is Judge of an event log alone (no recorded calls) and the
// upgrades' graphs: what a real-cluster runner (make demo, the e2e, the
// bench) has.
func JudgeEvents(events []eventlog.Event, upgrades []UpgradeSpec) *Result {
	return Judge(Input{History: FromEvents(events), Upgrades: upgrades})
}

// ArtifactsBeside is the artifacts folder of a failing run whose event log
// is at eventLog: "<eventLog without its extension>-artifacts" beside it,
// or, without an event log file, a new folder in the system's temporary
// folder named after name.
func ArtifactsBeside(eventLog, name string) (string, error) {
	if eventLog != "" {
		return strings.TrimSuffix(eventLog, filepath.Ext(eventLog)) + "-artifacts", nil
	}
	dir, err := os.MkdirTemp("", name+"-artifacts-")
	if err != nil {
		return "", fmt.Errorf("create artifacts folder: %w", err)
	}
	return dir, nil
}

// Failure is r's error with the artifacts of a failure written beside
// eventLog (ArtifactsBeside) and their paths: nil when r passed.
func (r *Result) Failure(eventLog, name, notes string) error {
	if r.OK() {
		return nil
	}
	err := r.Err()
	dir, derr := ArtifactsBeside(eventLog, name)
	if derr == nil {
		derr = r.WriteArtifacts(dir, r.history, notes)
	}
	if derr != nil {
		return errors.Join(err, derr)
	}
	return fmt.Errorf("%w\nartifacts: %s", err, strings.Join(ArtifactPaths(dir), " "))
}

// graph is an upgrade's spec with the namespace its references are
// relative to.
type graph struct {
	u  *UpgradeSpec
	ns string
}

// graphsOf is each of upgrades in its own namespace.
func graphsOf(upgrades []UpgradeSpec) []graph {
	out := make([]graph, 0, len(upgrades))
	for i := range upgrades {
		out = append(out, graph{&upgrades[i], upgrades[i].Namespace})
	}
	return out
}
