package simrun

import (
	"context"
	"fmt"
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/render/console"
	"github.com/lunadas/upgrade-operator/simulator"
)

// OperatorName is the name of the first operator's simulator.Controller.
const OperatorName = "applicationupgrade"

// ObservedVersion is the version Config.Observe, the recorded calls and
// the operator's watches see ApplicationUpgrades at; the store keeps them
// at StorageVersion, and the event log and the transcript read them there
// (showing the v1alpha1 phase).
var ObservedVersion = upgradesv1alpha1.GroupVersion

// Env is a simulation with the Kubernetes models and the operator
// installed, for callers that drive it step by step (scenarios that act
// mid-run: restarts, faults, spec changes). Run is Env end to end.
type Env struct {
	// Sim is the simulation; its Client is the API a user would talk to.
	Sim *simulator.Sim
	// Operator is the operator's controller (Crash / Restart / SetDelivery).
	Operator *simulator.Controller

	cfg Config
	// changedApp and changedUpgrades: a commit of a Deployment, ReplicaSet
	// or pod, or of an ApplicationUpgrade, since the last whenChanged check
	changedApp, changedUpgrades bool
	rec                         *eventlog.Recorder
	// calls records the operator's calls and the detailed facts
	// (Config.RecordCalls); nil otherwise
	calls  *judge.Recorder
	tr     *console.Console
	sink   *eventSink
	start  time.Time
	graphs map[string]bool // namespace/name of the upgrades created at v1beta1
	// reconcilesBy counts the operator's reconciles per upgrade (namespace/name)
	reconcilesBy map[string]int
	// created are the upgrades as created, before any change of their
	// spec: compared with their final specs, they show which components
	// were respecced (respecced, for the judge)
	created []upgradesv1beta1.ApplicationUpgrade
}

// countReconciles wraps wrap (may be nil) so each reconcile of the
// operator is counted for its upgrade.
func (e *Env) countReconciles(wrap func(reconcile.Reconciler) reconcile.Reconciler) func(reconcile.Reconciler) reconcile.Reconciler {
	return func(r reconcile.Reconciler) reconcile.Reconciler {
		inner := r
		if wrap != nil {
			inner = wrap(r)
		}
		return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			e.reconcilesBy[req.String()]++
			return inner.Reconcile(ctx, req)
		})
	}
}

// NewEnv creates the simulation of cfg: the event log and transcript
// subscribed, the Kubernetes models and the operator installed. It creates
// none of cfg.Objects (see Create).
func NewEnv(ctx context.Context, cfg Config) (*Env, error) {
	sim := NewSim(simulator.Options{Seed: cfg.Seed})
	e := &Env{Sim: sim, cfg: cfg, start: sim.Now(), graphs: map[string]bool{}}
	e.rec = eventlog.NewRecorder(e.start, cfg.EventLog)
	e.rec.SetTemplateHash(simulator.PodTemplateHash)
	e.tr = console.New(cfg.Transcript, e.start)
	if cfg.RecordCalls {
		e.calls = judge.NewRecorder(e.start, sim.Now)
		e.calls.SetTemplateHash(simulator.PodTemplateHash)
	}
	// The event log and the transcript read ApplicationUpgrades at the
	// storage version: the log takes the v1alpha1 phase from the stored
	// object (PhaseFromHub, what the v1alpha1 view shows) and the
	// transcript converts only what it prints, so no upgrade event is
	// converted for them.
	sim.Subscribe(func(ev simulator.WatchEvent) {
		if hub, ok := ev.Object.(*upgradesv1beta1.ApplicationUpgrade); ok {
			e.rec.ObserveUpgrade(ev.Type, hub, upgradesv1alpha1.PhaseFromHub(hub), ev.Time)
		} else {
			e.rec.Observe(ev.Type, ev.Object, ev.Time)
		}
		e.tr.Observe(ev.Type, ev.Object, ev.Time)
	})
	if e.calls != nil || cfg.Observe != nil {
		sim.Subscribe(func(ev simulator.WatchEvent) {
			if e.calls != nil {
				e.calls.Observe(ev.Type, ev.Object, ev.Time)
			}
			if cfg.Observe != nil {
				cfg.Observe(ev)
			}
		}, ObservedVersion)
	}
	sim.Subscribe(func(ev simulator.WatchEvent) {
		switch ev.Object.(type) {
		case *appsv1.Deployment, *appsv1.ReplicaSet, *appsv1.StatefulSet, *appsv1.DaemonSet, *appsv1.ControllerRevision, *corev1.Pod:
			e.changedApp = true
		case *upgradesv1alpha1.ApplicationUpgrade, *upgradesv1beta1.ApplicationUpgrade:
			e.changedUpgrades = true
		}
	})
	sim.InstallKubeControllers(cfg.Kube)
	e.sink = &eventSink{clock: sim.Clock(), start: e.start}
	if err := controller.SetupIndexes(ctx, sim.FieldIndexer()); err != nil {
		return nil, err
	}
	customize := cfg.Reconciler
	var setupErr error
	if cfg.Faults != nil {
		// the injector sets the operator up first (its client), then the test's customisation
		customize = func(r *controller.ApplicationUpgradeReconciler) {
			setupErr = cfg.Faults.Setup(ctx, sim, r)
			if cfg.Reconciler != nil {
				cfg.Reconciler(r)
			}
		}
	}
	wrap := cfg.Wrap
	if e.calls != nil {
		// every call of the operator through the recording client, each
		// reconcile numbered (as the features' backends instrument it)
		inner := customize
		customize = func(r *controller.ApplicationUpgradeReconciler) {
			if inner != nil {
				inner(r)
			}
			r.Client = e.calls.WrapClient(r.Client, 0, nil)
		}
		outer := wrap
		wrap = func(r reconcile.Reconciler) reconcile.Reconciler {
			if outer != nil {
				r = outer(r)
			}
			return e.calls.WrapReconciler(r, 0)
		}
	}
	e.reconcilesBy = map[string]int{}
	e.Operator = e.AddOperator(OperatorName, customize, e.countReconciles(wrap))
	if setupErr != nil {
		return nil, setupErr
	}
	return e, nil
}

// whenChanged wraps a stop condition that reads only the objects whose
// commits set *changed (e.changedApp or e.changedUpgrades) so that it is
// evaluated only after such a commit (Sim.Run checks it after every event).
func (e *Env) whenChanged(changed *bool, cond func() bool) func() bool {
	*changed = true
	return func() bool {
		if !*changed {
			return false
		}
		*changed = false
		return cond()
	}
}

// AddOperator adds another operator process (a second replica) named name:
// its own reconciler, customised by customize and wrapped by wrap (either
// may be nil), fed by the operator's watches. Each process's reconciler
// writes its Kubernetes events to the run's event sink.
func (e *Env) AddOperator(name string, customize func(*controller.ApplicationUpgradeReconciler), wrap func(reconcile.Reconciler) reconcile.Reconciler) *simulator.Controller {
	// The manager pins the field owner of every write (manager.New); so does the simulated process.
	r := &controller.ApplicationUpgradeReconciler{Client: client.WithFieldOwner(e.Sim.Client(), controller.FieldManager), Clock: e.Sim.Clock(), Recorder: e.sink}
	if customize != nil {
		customize(r)
	}
	var rec reconcile.Reconciler = r
	if wrap != nil {
		rec = process{Reconciler: wrap(r), forget: r.ForgetProcessState}
	}
	return e.Sim.AddController(name, rec, OperatorWatches(e.Sim)...)
}

// process is a wrapped reconciler that still loses its process state
// (simulator.ProcessState) when the simulator crashes its process.
type process struct {
	reconcile.Reconciler
	forget func()
}

// ForgetProcessState forgets the wrapped reconciler's process state.
func (p process) ForgetProcessState() { p.forget() }

// OperatorWatches are the manager's watches (controller.Mapper.Watches,
// predicates included) as simulator watches reading sim's store.
func OperatorWatches(sim *simulator.Sim) []simulator.Watch {
	var ws []simulator.Watch
	for _, w := range (controller.Mapper{Reader: sim.Client()}).Watches() {
		ws = append(ws, simulator.Watch{Object: w.Object, Map: w.Map, Filter: simulator.FilterOf(w.Predicate)})
	}
	return ws
}

// Create creates objs in order; errors name the object. An
// ApplicationUpgrade created at v1beta1 is shown and judged as a graph
// (console.Console.Graph, Summary's Graphs and Edges) whatever its shape.
func (e *Env) Create(ctx context.Context, objs []client.Object) error {
	for _, o := range objs {
		if _, ok := o.(*upgradesv1beta1.ApplicationUpgrade); ok {
			e.graphs[o.GetNamespace()+"/"+o.GetName()] = true
			e.tr.Graph(o.GetNamespace(), o.GetName())
		}
	}
	if err := create(ctx, e.Sim.Client(), objs); err != nil {
		return err
	}
	for _, o := range objs {
		switch o.(type) {
		case *upgradesv1beta1.ApplicationUpgrade, *upgradesv1alpha1.ApplicationUpgrade:
			var u upgradesv1beta1.ApplicationUpgrade
			if err := e.Sim.Client().Get(ctx, client.ObjectKeyFromObject(o), &u); err != nil {
				return fmt.Errorf("read back applicationupgrade %s/%s: %w", o.GetNamespace(), o.GetName(), err)
			}
			e.created = append(e.created, u)
		}
	}
	return nil
}

// RunUntil runs the simulation until cond holds (checked before the first
// event and after each), for at most timeout of virtual time from now. It
// fails when the time runs out or nothing is left to happen first; what
// names the awaited condition in the error.
func (e *Env) RunUntil(ctx context.Context, what string, cond func() bool, timeout time.Duration) error {
	res, err := e.Sim.Run(ctx, cond, e.Sim.Elapsed()+timeout)
	switch {
	case err != nil:
		return fmt.Errorf("%s: not within %s (at virtual %s): %w", what, timeout, simulator.FormatElapsed(e.Sim.Elapsed()), err)
	case !res.Stopped:
		return fmt.Errorf("%s: never (nothing left to happen at virtual %s)", what, simulator.FormatElapsed(e.Sim.Elapsed()))
	}
	return nil
}

// RunUntilRolledOut runs until every Deployment is rolled out or failed
// (rollout.Assess), as a user waits before applying an upgrade.
func (e *Env) RunUntilRolledOut(ctx context.Context, timeout time.Duration) error {
	var check rolloutCheck
	lister := e.Sim.SharedLister("client")
	err := e.RunUntil(ctx, "the application rolled out", func() bool { return check.appRolledOut(ctx, lister) }, timeout)
	if err != nil {
		return fmt.Errorf("the application never rolled out before the upgrade: %w", err)
	}
	return nil
}

// Summary lists the ApplicationUpgrades and judges each with
// judge.Ordering over the event log so far (a graph upgrade: every
// dependency edge, judge.GraphOrdering); the transcript gets its closing
// part.
func (e *Env) Summary(ctx context.Context) (*Result, error) {
	res := &Result{Elapsed: e.Sim.Elapsed(), Events: e.rec.Events(), KubeEvents: e.sink.events, Reconciles: e.Operator.Reconciles(),
		ReconcilesBy: maps.Clone(e.reconcilesBy)}
	if err := judgeRun(ctx, e.Sim.Client(), e.graphs, e.created, e.calls, res); err != nil {
		return nil, err
	}
	e.tr.Finish(*res)
	if err := e.rec.Err(); err != nil {
		return res, fmt.Errorf("write event log: %w", err)
	}
	return res, nil
}
