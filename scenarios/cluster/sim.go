package cluster

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
	"github.com/lunadas/upgrade-operator/simulator"
)

// Sim runs a scenario in the discrete-event simulator: virtual time, the
// models of the Deployment and ReplicaSet controllers and of kwok's
// kubelets, and the operator's real reconciler.
type Sim struct {
	opts   Options
	env    *simrun.Env
	rec    *judge.Recorder
	faults *faults.Boundary
	ns     string
	// replicas are the operator processes; elected once a standby runs.
	replicas []*faults.Replica
	elected  bool
	// actors are the catalog's cluster actors and webhook-down
	// (faults.LiveActors) in virtual time
	actors *faults.LiveActors
	// tenures are the replicas' acquisitions of the Lease, in time;
	// stalled is the replica lease-lost stalled or pause stopped (-1:
	// none).
	tenures []tenure
	stalled int
	// informers: the replicas read through caches (sim_informers.go),
	// caches[i] replica i's, since the first stale or drop; ctx is the
	// scenario's, for their lists at the replicas' cold starts
	informers bool
	caches    []*faults.Cache
	ctx       context.Context
}

var (
	_ Cluster = (*Sim)(nil)
	_ SimOnly = (*Sim)(nil)
)

// NewSim creates the simulation of one scenario with the operator running.
func NewSim(ctx context.Context, opts Options) (*Sim, error) {
	s := &Sim{opts: opts, ns: namespaceFor(opts.Scenario, opts.Seed), stalled: -1, ctx: ctx}
	s.faults = faults.NewBoundary(opts.Seed, s.Elapsed, s.kill)
	s.rec = judge.NewRecorder(simulator.DefaultStart, func() time.Time { return s.env.Sim.Now() })
	s.rec.SetTemplateHash(simulator.PodTemplateHash)
	customize, wrap := s.hooks(0)
	env, err := simrun.NewEnv(ctx, simrun.Config{
		Seed:       opts.Seed,
		Kube:       simulator.KubeOptions{Nodes: simulator.NodeNames(opts.Nodes)},
		Observe:    func(ev simulator.WatchEvent) { s.rec.Observe(ev.Type, ev.Object, ev.Time) },
		Reconciler: customize,
		Wrap:       wrap,
	})
	if err != nil {
		return nil, err
	}
	s.env = env
	s.replicas = []*faults.Replica{s.newReplica(0, env.Operator)}
	s.actors = faults.NewLiveActors(ctx, faults.SimActorRuntime(env.Sim), s.ns, s.faults, s.Elapsed, s.rec.History)
	env.Sim.SetAPIInterceptor(s.actors.Intercept)
	return s, nil
}

// hooks instruments operator process replica (see instrument); its reads
// go through its informer cache once it has one (cacheSwitch), and its
// reconciler gets the lease guard's check, as the manager's does under
// leader election (LeaseHeld: the replica's last own renewal,
// faults.Replica.LeaseHeld); a policy that sets LeaseHeld (a mutant)
// keeps its own.
func (s *Sim) hooks(replica int) (func(*controller.ApplicationUpgradeReconciler), func(reconcile.Reconciler) reconcile.Reconciler) {
	customize, wrap := instrument(s.opts.Policy, s.rec, s.faults, replica)
	return func(r *controller.ApplicationUpgradeReconciler) {
		r.Client = cacheSwitch{Client: r.Client, s: s, replica: replica}
		customize(r)
		if r.LeaseHeld == nil {
			r.LeaseHeld = func() error { return s.leaseHeld(replica) }
		}
	}, wrap
}

// leaseHeld is replica's LeaseHeld: nil until a standby runs (no leader
// election: the manager wires no guard), then the replica's lease guard.
func (s *Sim) leaseHeld(replica int) error {
	if !s.elected {
		return nil
	}
	return s.replicas[replica].LeaseHeld()
}

// Backend implements Cluster.
func (s *Sim) Backend() string { return BackendSim }

// Namespace implements Cluster.
func (s *Sim) Namespace() string { return s.ns }

// Client implements Cluster: the simulator's API through the admission
// check the validating webhook makes on a real cluster (admissionClient).
func (s *Sim) Client() client.Client { return admissionClient{s.env.Sim.Client()} }

// Eventually implements Cluster in virtual time.
func (s *Sim) Eventually(ctx context.Context, what string, timeout time.Duration, cond Condition) error {
	var condErr error
	err := s.env.RunUntil(ctx, what, func() bool {
		ok, err := cond(ctx)
		if err != nil {
			condErr = err
			return true
		}
		return ok
	}, timeout)
	if condErr != nil {
		return fmt.Errorf("%s: %w", what, condErr)
	}
	return err
}

// Consistently implements Cluster in virtual time.
func (s *Sim) Consistently(ctx context.Context, what string, d time.Duration, cond Condition) error {
	sim := s.env.Sim
	deadline := sim.Now().Add(d)
	var condErr error
	broken := func() bool {
		ok, err := cond(ctx)
		if err != nil {
			condErr = err
		}
		return !ok
	}
	res, err := sim.Run(ctx, broken, deadline.Sub(simulator.DefaultStart))
	switch {
	case condErr != nil:
		return fmt.Errorf("%s: %w", what, condErr)
	case res.Stopped:
		return fmt.Errorf("%s: broken at virtual %s", what, simulator.FormatElapsed(sim.Elapsed()))
	case ctx.Err() != nil:
		return ctx.Err()
	}
	_ = err // the limit was reached: d passed with cond holding
	_, err = sim.RunUntil(ctx, deadline)
	return err
}

// History implements Cluster.
func (s *Sim) History() judge.History { return s.rec.History() }

// Elapsed implements Cluster.
func (s *Sim) Elapsed() time.Duration { return s.env.Sim.Elapsed() }

// Close implements Cluster.
func (s *Sim) Close(context.Context) error { return nil }
