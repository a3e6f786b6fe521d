package cluster

import (
	"context"
	"fmt"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/simulator"
)

// Inject implements Cluster: the API faults (inject) and a crash at a
// call act at the operator's recording client; a crash at a time,
// lease-lost and kcm-lag are the simulator's, stale and drop lag or cut
// the replicas' informer caches (make simulate's, faults.Cache:
// sim_informers.go), and the cluster actors and webhook-down those of
// make simulate (faults.LiveActors), at f.At from now.
func (s *Sim) Inject(ctx context.Context, f faults.Fault) error {
	return inject(s.faults, f, func(f faults.Fault) error { return s.injectOwn(ctx, f) })
}

func (s *Sim) injectOwn(ctx context.Context, f faults.Fault) error {
	switch f.Kind {
	case faults.Crash:
		if f.Call > 0 {
			return s.faults.Arm(f)
		}
		s.at(f, func() { s.crash(f) })
	case faults.LeaseLost:
		if !s.elected {
			return refuse(BackendSim, f, "it stalls the leader of two replicas: add a standby replica first (a second operator replica is on standby under leader election)")
		}
		s.at(f, func() { s.stallLeader(f) })
	case faults.Pause:
		return s.injectPause(f)
	case faults.KCMLag:
		s.at(f, func() { s.kcmLag(f) })
	case faults.Stale, faults.Drop:
		return s.cacheFault(ctx, f)
	default:
		if faults.Implements(f.Kind) {
			return s.actors.Inject(f)
		}
		return refuseInFeatures(BackendSim, f)
	}
	return nil
}

// inject arms the API faults, which both backends inject at the
// operator's recording client (faults.Boundary), and hands every other
// kind to the backend's own.
func inject(b *faults.Boundary, f faults.Fault, own func(faults.Fault) error) error {
	switch f.Kind {
	case faults.Conflict, faults.Unavailable, faults.Timeout, faults.AmbiguousW:
		return b.Arm(f)
	}
	return own(f)
}

// refuseInFeatures refuses the catalog's faults that only make simulate
// runs: the setup faults change the manifests before the run (a
// feature declares its Deployments instead), and the others act through
// the make simulate run's own actors and informers (faults.Injector).
func refuseInFeatures(backend string, f faults.Fault) error {
	if spec, _ := faults.Lookup(f.Kind); spec.Trigger == faults.AtSetup {
		return refuse(backend, f, "it changes the manifests before a make simulate run; a feature declares its Deployment that way (pods ready after …, image tag :never-ready, :crashloop, :does-not-exist)")
	}
	return refuse(backend, f, "the features inject conflict, unavailable, timeout, ambiguous, crash, lease-lost, kcm-lag, stale, drop and the cluster actors; run it with make simulate --faults")
}

// at runs fire f.At from now (at once for @0s: before the step returns).
func (s *Sim) at(f faults.Fault, fire func()) {
	if f.At == 0 {
		fire()
		return
	}
	s.env.Sim.Schedule(f.At, "fault "+f.String(), fire)
}

// crash is a crash at a time: the leader (replica 0 without election) is
// killed, or with p > 0 the kills at every later call begin.
func (s *Sim) crash(f faults.Fault) {
	if f.Float("p") > 0 {
		f.Call = 0
		_ = s.faults.Arm(f) // a crash is the boundary's
		return
	}
	i := 0
	if s.elected {
		if j, err := s.leading(); err == nil {
			i = j
		}
	}
	if s.kill(i, f) {
		s.faults.Record(f, f.Dur("down"), fmt.Sprintf("operator replica %d killed, restarts in %s with a cold cache", i, f.Str("down")))
	}
}

// kill crashes operator process replica at once and restarts it the
// fault's down later (under leader election: as a new candidate); false
// when it is down already.
func (s *Sim) kill(replica int, f faults.Fault) bool {
	r := s.replicas[replica]
	if !r.Alive {
		return false
	}
	r.CrashFor(f.Dur("down"))
	return true
}

// kcmLag delays the watch events of the Deployment and ReplicaSet
// controllers for the fault's window.
func (s *Sim) kcmLag(f faults.Fault) {
	d, lag := f.Dur("for"), f.Dur("lag")
	names := []string{simulator.DeploymentControllerName, simulator.ReplicaSetControllerName}
	for _, n := range names {
		s.env.Sim.Controller(n).SetWatchDelay(lag)
	}
	s.faults.Record(f, d, fmt.Sprintf("the Deployment and ReplicaSet controllers see events %s late for %s", lag, d))
	s.env.Sim.Schedule(d, "end of "+f.String(), func() {
		for _, n := range names {
			s.env.Sim.Controller(n).SetWatchDelay(0)
		}
	})
}

// Fired implements Cluster.
func (s *Sim) Fired() []faults.Fired { return s.faults.Fired() }

// Violations implements Cluster.
func (s *Sim) Violations() []string { return s.actors.Violations() }
