package faults

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/render/timeline"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
	"github.com/lunadas/upgrade-operator/simulator"
)

// deleteSettle is how long after an upgrade's deletion the operator may
// still act on it (a cache that has not seen the deletion yet); later
// Deployment writes are violations, and a run whose upgrade stays deleted
// ends deleteWatch after the deletion.
const (
	deleteSettle = time.Minute
	deleteWatch  = 2 * time.Minute
)

// MaxCalls bounds the operator's API calls in one run, MaxCallsAtOnce
// those at one virtual instant (a controller that backs off lets time
// pass): past either the run is a hot loop (a violation) and ends. Undisturbed runs make under 1,500; the most in 10,000 seeded runs is under 4,000.
//
// Both are for an upgrade of two components (the demo); a run's limits
// scale with its components (Injector.ScaleLimits): an undisturbed wave of
// four components writes four Deployments at one instant, and every
// ReplicaSet, pod and status event of the four wakes a reconcile that
// reads every component without a cache (graph-wide, seed 362: 17
// reconciles, 300 calls at t=6.5s, then quiet).
const (
	MaxCalls       = 8000
	MaxCallsAtOnce = 300
)

// Fired is a fault as it happened: times since the start of the run. A
// Fired with no Fault kind marks an event of the fault models (a leader
// lost or elected) described by Note.
type Fired struct {
	Fault      Fault
	Start, End time.Duration
	Note       string
}

// Spans are the fired faults as the timeline's shaded windows, each
// labelled with its spec (a model's event with its note).
func Spans(fired []Fired) []timeline.Span {
	out := make([]timeline.Span, 0, len(fired))
	for _, f := range fired {
		label := f.Fault.String()
		if f.Fault.Kind == "" {
			label = f.Note
		}
		out = append(out, timeline.Span{Label: label, Start: f.Start.Seconds(), End: f.End.Seconds()})
	}
	return out
}

// Write is a Deployment write by the operator that changed its images
// (committed, also when the operator was told it failed).
type Write struct {
	At         time.Duration
	Process    string
	Deployment string
	Image      string
}

// WriteCall is a write the operator attempted (any kind, status patches
// included, whether it then failed or not), attributed to the process
// incarnation that made it.
type WriteCall struct {
	At       time.Duration
	Identity string // the process incarnation: operator-0_1
	Verb     string
	Kind     string
	Object   string // namespace/name, then /subresource if any
}

// Injector applies a Schedule to one simulated run; it implements
// simrun.Injector. Use one per run.
type Injector struct {
	// components is the number of components of the run's upgrades
	// (ScaleLimits); 0 means two.
	components int
	sched      Schedule
	out        io.Writer
	ctx        context.Context
	// actors are the cluster actors and webhook-down (actor.go), on the
	// simulator's runtime and the Injector's targets
	actors *actors

	sim       *simulator.Sim
	base      *controller.ApplicationUpgradeReconciler
	procs     []*process
	byClient  map[string]*process // the reconcilers' clients
	auxClient map[string]*process // the lease and informer clients
	cacheMode bool
	leaseMode bool
	// guarded: in lease mode each replica's reconciler checks its own
	// renewal (Replica.LeaseHeld), as the manager wires LeaseGuard; off
	// when the reconciler under test brings a LeaseHeld of its own (a
	// mutant).
	guarded bool
	elected bool
	// zombieLeaders (tests only) keeps a replica running after it lost
	// its lease, to prove the one-writer check can fail.
	zombieLeaders bool

	started  bool
	t0       time.Time
	calls    int
	lastCall time.Time
	// callsAtOnce counts calls at lastCall; hotLoop ends the run
	callsAtOnce int
	hotLoop     bool
	byCall      map[int][]Fault
	windows     []*callWindow
	randomKills []Fault    // crash faults with p > 0, armed
	rng         *rand.Rand // their draws, from the schedule's seed (made when one is armed)
	fired       []Fired
	writes      map[string]int
	writeLog    []Write
	writeCalls  []WriteCall
	inWrite     *pendingWrite
	errs        []string

	// objs are the run's objects as prepared (setup faults applied);
	// upgrades the ApplicationUpgrades among them (either version), as
	// created, for re-creation.
	objs      []client.Object
	upgrades  []client.Object
	spec      map[types.NamespacedName]*targetSpec
	deletedAt time.Time
}

var _ simrun.Injector = (*Injector)(nil)

// NewInjector returns an injector for sched writing a line per fault to
// transcript (may be nil). objs are the run's objects as prepared (setup
// faults applied): the expected outcome starts from their
// ApplicationUpgrades (either version).
func NewInjector(sched Schedule, objs []client.Object, transcript io.Writer) *Injector {
	in := &Injector{sched: sched, out: transcript, byClient: map[string]*process{}, auxClient: map[string]*process{},
		byCall: map[int][]Fault{}, writes: map[string]int{}, spec: map[types.NamespacedName]*targetSpec{}, objs: objs, upgrades: upgradesIn(objs)}
	for _, f := range sched.Faults {
		switch f.Kind {
		case Stale, Drop: // IsCacheFault
			in.cacheMode = true
		case LeaseLost, Pause:
			in.leaseMode = true
		}
		if f.Call > 0 {
			in.byCall[f.Call] = append(in.byCall[f.Call], f)
		}
	}
	for _, u := range in.upgrades {
		in.spec[client.ObjectKeyFromObject(u)] = newTargetSpec(u)
	}
	return in
}

// Setup gives the operator its own client (and informers when the
// schedule has cache faults) and installs the API interceptor.
func (in *Injector) Setup(ctx context.Context, sim *simulator.Sim, r *controller.ApplicationUpgradeReconciler) error {
	in.ctx, in.sim, in.base = ctx, sim, r
	in.actors = &actors{ctx: ctx, rt: simRuntime{sim}, st: injectorStage{in}}
	p, err := in.newProcess(ctx, 0)
	if err != nil {
		return err
	}
	r.Client = newOpClient(p)
	sim.SetAPIInterceptor(in.intercept)
	sim.Subscribe(in.observeCommit)
	return nil
}

// Start starts the fault clock: time-triggered faults are scheduled, call
// counting begins, and in lease mode the second replica and the electors
// start.
func (in *Injector) Start(op *simulator.Controller) {
	in.started, in.t0 = true, in.sim.Now()
	p0 := in.procs[0]
	p0.Ctl = op
	if p0.cache != nil {
		p0.cache.Attach(op)
	}
	if in.leaseMode {
		if in.base.LeaseHeld == nil {
			in.guarded = true
			in.base.LeaseHeld = p0.LeaseHeld // in.base is replica 0's reconciler
		}
		in.startElection()
	}
	for _, f := range in.sched.Faults {
		if lookupTrigger(f.Kind) == AtSetup {
			in.describeSetup(f)
		}
		if f.timed() {
			f := f
			in.sim.Schedule(f.At, "fault "+f.String(), func() { in.fireTimed(f) })
		}
	}
}

func lookupTrigger(k Kind) Trigger {
	spec, _ := Lookup(k)
	return spec.Trigger
}

// describeSetup records a setup fault (applied by Prepare) with the
// components it changed, so the transcript and the timeline name them.
func (in *Injector) describeSetup(f Fault) {
	var what []string
	for _, c := range named(in.objs, f.Str("dep")) {
		switch f.Kind {
		case Slow:
			what = append(what, fmt.Sprintf("the pods of %s take up to %s to become Ready and %s to exit", c.label(), f.Str("ready"), f.Str("exit")))
		default:
			what = append(what, fmt.Sprintf("%s of upgrade %s targets %s", c.label(), c.Upgrade, c.Image))
		}
	}
	if len(what) == 0 {
		what = []string{"no component named " + f.Str("dep")}
	}
	in.record(f, 0, strings.Join(what, "; "))
}

// Done ends a run whose upgrades were deleted and stay deleted, once the
// operator had time to show it does nothing more, and a hot loop.
func (in *Injector) Done() bool {
	return in.hotLoop || !in.deletedAt.IsZero() && in.allDeleted() && in.sim.Now().Sub(in.deletedAt) >= deleteWatch
}

// ScaleLimits scales the hot-loop limits (MaxCalls, MaxCallsAtOnce, set
// for two components) to the run's n components: × max(1, n/2).
func (in *Injector) ScaleLimits(n int) { in.components = n }

func (in *Injector) limitScale() int { return max(1, in.components/2) }

// intercept is the API interceptor: it counts the operator's calls, fires
// call-triggered faults and fails calls in open windows. Other clients'
// calls pass, except a stalled replica's lease and informer calls.
func (in *Injector) intercept(req simulator.APIRequest) error {
	if p := in.processOf(req.Client); p != nil && p.Paused {
		in.violate("model error: %s made an API call (%s %s) while its process was paused", req.Client, req.Verb, req.GVK.Kind)
	}
	if p := in.auxClient[req.Client]; p != nil {
		if p.stalled() {
			return timeoutErr()
		}
		return nil
	}
	p := in.byClient[req.Client]
	if p == nil || !in.started {
		if in.actors.webhookRefuses(req) { // a user's or an actor's write
			return webhookErr()
		}
		return nil
	}
	in.calls++
	if isWrite(req.Verb) {
		obj := req.Namespace + "/" + req.Name
		if req.Subresource != "" {
			obj += "/" + req.Subresource
		}
		in.writeCalls = append(in.writeCalls, WriteCall{At: in.sim.Elapsed(), Identity: p.Identity(), Verb: req.Verb, Kind: req.GVK.Kind, Object: obj})
	}
	if in.sim.Now().Equal(in.lastCall) {
		in.callsAtOnce++
	} else {
		in.lastCall, in.callsAtOnce = in.sim.Now(), 1
	}
	if in.calls == MaxCalls*in.limitScale() || in.callsAtOnce == MaxCallsAtOnce*in.limitScale() {
		in.hotLoop = true
		in.violate("hot loop: the operator made %d API calls in all, %d at virtual %s", in.calls, in.callsAtOnce, simulator.FormatElapsed(in.sim.Elapsed()))
	}
	for _, f := range in.byCall[in.calls] {
		if err := in.fireAtCall(p, f); err != nil {
			return err
		}
	}
	if err := in.randomKill(p); err != nil {
		return err
	}
	if p.stalled() {
		return timeoutErr()
	}
	if in.actors.webhookRefuses(req) {
		return webhookErr()
	}
	write := isWrite(req.Verb)
	if in.leaseMode && write {
		in.checkLeader(p, req)
	}
	target := writeTarget(req.GVK.Kind, types.NamespacedName{Namespace: req.Namespace, Name: req.Name}, req.Subresource)
	for _, w := range in.windows {
		hit, closed := w.hit(write, target)
		if !hit {
			continue
		}
		if closed {
			in.fired[w.fired].End = in.sim.Elapsed()
		}
		err := injectedErr(w.fault.Kind, groupResource(req.GVK), req.Name)
		if w.fault.Kind == AmbiguousW {
			return simulator.Ambiguous(err)
		}
		return err
	}
	return nil
}

// processOf is the operator process a client belongs to (its
// reconciler's, lease or informer client), nil for any other.
func (in *Injector) processOf(client string) *process {
	if p := in.byClient[client]; p != nil {
		return p
	}
	return in.auxClient[client]
}

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// fireAtCall fires a call-triggered fault inside the operator's call; a
// crash fails the call.
func (in *Injector) fireAtCall(p *process, f Fault) error {
	switch f.Kind {
	case Crash:
		if f.Float("p") > 0 {
			in.startRandomKills(f)
			return in.randomKill(p)
		}
		in.crash(p, f)
		return errKilled
	case Conflict, Unavailable, Timeout, AmbiguousW:
		idx := in.record(f, 0, windowNote(f))
		in.windows = append(in.windows, newCallWindow(f, idx))
	}
	return nil
}

// startRandomKills arms a crash with p > 0: from now on every API call of
// the operator may kill it (randomKill).
func (in *Injector) startRandomKills(f Fault) {
	in.record(f, 0, fmt.Sprintf("from now on the operator is killed before each API call with probability %s%%, down %s each time", f.Str("p"), f.Str("down")))
	in.randomKills = append(in.randomKills, f)
	if in.rng == nil {
		in.rng = newKillRand(in.sched.Seed)
	}
}

// randomKill kills p before its call as the armed random crashes draw.
func (in *Injector) randomKill(p *process) error {
	for _, f := range in.randomKills {
		if p.Alive && in.rng.Float64()*100 < f.Float("p") {
			in.crash(p, f)
			return errKilled
		}
	}
	return nil
}

// record logs a fired fault (a line in the transcript) and returns its
// index; d > 0 is its known length.
func (in *Injector) record(f Fault, d time.Duration, note string) int {
	now := in.sim.Elapsed()
	end := now
	if d > 0 {
		end = now + d
	}
	in.fired = append(in.fired, Fired{Fault: f, Start: now, End: end, Note: note})
	if in.out != nil {
		fmt.Fprintf(in.out, "[t=%7.1fs] fault %s: %s\n\n", now.Seconds(), f, note)
	}
	return len(in.fired) - 1
}

func (in *Injector) violate(format string, args ...any) {
	in.errs = append(in.errs, fmt.Sprintf(format, args...))
}

// crash kills p (the leader in lease mode); it restarts after down.
func (in *Injector) crash(p *process, f Fault) {
	down := f.Dur("down")
	if !p.Alive {
		in.record(f, 0, p.Name+" is already down")
		return
	}
	in.record(f, down, fmt.Sprintf("%s killed, restarts in %s with a cold cache", p.Name, down))
	p.CrashFor(down)
}

// target is the process faults of the process kind hit: the leader, else
// the first live one.
func (in *Injector) target() *process {
	for _, p := range in.procs {
		if p.Leading() {
			return p
		}
	}
	for _, p := range in.procs {
		if p.Alive {
			return p
		}
	}
	return in.procs[0]
}
