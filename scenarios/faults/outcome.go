package faults

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
	"github.com/lunadas/upgrade-operator/simulator"
)

// DefaultLimit is the virtual time a faulty run may take.
const DefaultLimit = 30 * time.Minute

// RunConfig is one faulty run.
type RunConfig struct {
	Schedule Schedule
	// Objects are the scenario's objects; nil loads Schedule.Scenario.
	Objects []client.Object
	// Transcript and EventLog receive what simrun writes, plus a line per fault.
	Transcript, EventLog io.Writer
	// Reconciler customises the reconciler under test (mutants).
	Reconciler func(*controller.ApplicationUpgradeReconciler)
	// Limit is the virtual time limit; 0 means DefaultLimit.
	Limit time.Duration
}

// Outcome is a run judged against its schedule.
type Outcome struct {
	Schedule Schedule
	Result   *simrun.Result
	// Err is a run that could not start (bad input).
	Err error
	// Expected is each upgrade's demanded terminal state, by namespace/name.
	Expected map[string]Expectation
	// Violations are every broken property, empty for a good run.
	Violations []string
	Fired      []Fired
	Writes     []Write
	// WriteCalls are every write the operator's processes attempted.
	WriteCalls []WriteCall
	// Calls counts the operator's API calls from the upgrades' creation.
	Calls int
	// Start is when the upgrades were created: the origin of fault times.
	Start time.Duration
}

// Failed reports whether the run broke a property.
func (o *Outcome) Failed() bool { return o.Err != nil || len(o.Violations) > 0 }

// ExpectedState summarises Expected: the one state, or "mixed".
func (o *Outcome) ExpectedState() string {
	state := ""
	for _, e := range o.Expected {
		if state != "" && e.State != state {
			return "mixed"
		}
		state = e.State
	}
	return state
}

// Run runs cfg.Schedule and judges it.
func Run(ctx context.Context, cfg RunConfig) *Outcome {
	o := &Outcome{Schedule: cfg.Schedule, Expected: map[string]Expectation{}}
	objs := cfg.Objects
	reconciler := cfg.Reconciler
	if objs == nil {
		sc, err := LookupScenario(cfg.Schedule.Scenario)
		if err == nil {
			objs, err = sc.Objects()
		}
		if err != nil {
			o.Err = err
			return o
		}
		reconciler = sc.WithReconciler(cfg.Reconciler)
	}
	if err := RefuseTargets(objs, cfg.Schedule.Faults); err != nil {
		o.Err = err
		return o
	}
	objs = Prepare(objs, cfg.Schedule.Faults)
	in := NewInjector(cfg.Schedule, objs, cfg.Transcript)
	in.ScaleLimits(countComponents(objs))
	limit := cfg.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	// the operator's calls recorded, so the one judge reads its phase
	// claims and duplicate writes, not the event log alone
	res, err := simrun.Run(ctx, simrun.Config{Objects: objs, Seed: cfg.Schedule.Seed, Limit: limit,
		EventLog: cfg.EventLog, Transcript: cfg.Transcript, Reconciler: reconciler, Faults: in, RecordCalls: true})
	o.Result, o.Fired, o.Writes, o.WriteCalls, o.Calls = res, in.fired, in.writeLog, in.writeCalls, in.calls
	if in.started {
		o.Start = in.t0.Sub(simulator.DefaultStart)
	}
	if res == nil {
		o.Err = err
		return o
	}
	if err != nil {
		o.Violations = append(o.Violations, "the run did not finish: "+err.Error())
	}
	o.judge(in)
	return o
}

// judge collects every violation: ordering, the one judge's porcupine
// model and invariants, the injector's (duplicate writes, two writers,
// writes after deletion), and per upgrade its terminal state (v1alpha1:
// the phase and reason; a graph: the phase, reason and every component's
// phase) and its components' writes (checkWrites).
func (o *Outcome) judge(in *Injector) {
	res := o.Result
	for _, k := range sortedReportKeys(res) {
		for _, v := range res.Reports[k].Violations {
			o.Violations = append(o.Violations, fmt.Sprintf("ordering violation in %s: %s", k, v))
		}
	}
	if res.Judged != nil {
		// the one judge (judge.Judge); its ordering is the Reports' above
		o.Violations = append(o.Violations, res.Judged.Lines(judge.CheckOrdering)...)
	}
	o.Violations = append(o.Violations, in.errs...)
	got := map[string]*upgradesv1alpha1.ApplicationUpgrade{}
	for i := range res.Upgrades {
		u := &res.Upgrades[i]
		got[u.Namespace+"/"+u.Name] = u
	}
	keys := make([]string, 0, len(in.spec))
	for k := range in.spec {
		keys = append(keys, k.String())
	}
	sort.Strings(keys)
	for _, key := range keys {
		spec := in.spec[keyOf(key)]
		want := spec.expect()
		o.Expected[key] = want
		if spec.graph() {
			var g *upgradesv1beta1.ApplicationUpgrade
			if u, ok := res.Graphs[key]; ok {
				g = &u
			}
			o.Violations = append(o.Violations, checkGraph(key, want, g)...)
		} else if v := check(key, want, got[key]); v != "" {
			o.Violations = append(o.Violations, v)
		}
		o.Violations = append(o.Violations, in.checkWrites(key, spec, want, res.Events)...)
	}
}

func keyOf(s string) types.NamespacedName {
	ns, name, _ := strings.Cut(s, "/")
	return types.NamespacedName{Namespace: ns, Name: name}
}

func sortedReportKeys(res *simrun.Result) []string {
	keys := make([]string, 0, len(res.Reports))
	for k := range res.Reports {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// countComponents counts the components of the upgrades among objs (two
// per v1alpha1 upgrade).
func countComponents(objs []client.Object) int {
	n := 0
	for _, u := range upgradesIn(objs) {
		n += len(componentsOf(u))
	}
	return n
}
