package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
	"github.com/lunadas/upgrade-operator/simulator"
)

// newReplica is operator process i running ctl: a faults.Replica, the
// same model of a process, its restarts and its leader election as make
// simulate's; its lease calls time out while the Boundary stalls it, as
// its other calls do.
func (s *Sim) newReplica(i int, ctl *simulator.Controller) *faults.Replica {
	r := faults.NewReplica(s.env.Sim, fmt.Sprintf("%s-%d", simrun.OperatorName, i), faults.ReplicaHooks{
		Stalled: func() error { return s.faults.Stalled(i) },
		Led:     func() { s.tenures = append(s.tenures, tenure{replica: i, from: s.env.Sim.Elapsed()}) },
		Start:   func() { s.startReplica(s.ctx, i) },
		Pause: func() { // its informers stop with it (pause)
			if c := s.cacheOf(i); c != nil {
				c.Pause()
			}
		},
		Resume: func() {
			if c := s.cacheOf(i); c != nil {
				c.Resume(s.ctx)
			}
		},
	})
	r.Ctl = ctl
	return r
}

// AddStandbyReplica implements SimOnly: replica 1 starts as a standby
// (its controller runs nothing until it leads); replica 0 takes the lease.
// From then on both replicas run under leader election (faults.Replica):
// a replica's controller runs only while it leads, and a leader that
// cannot renew stops before a standby may take the lease — the property
// C10 checks from the history.
func (s *Sim) AddStandbyReplica(ctx context.Context) error {
	if s.elected {
		return fmt.Errorf("a standby replica is already running")
	}
	customize, wrap := s.hooks(1)
	standby := s.newReplica(1, s.env.AddOperator(fmt.Sprintf("%s-1", simrun.OperatorName), customize, wrap))
	standby.Ctl.Crash()
	s.replicas = append(s.replicas, standby)
	if s.informers {
		if err := s.addCache(ctx, 1); err != nil {
			return err
		}
	}
	s.elected = true
	for _, r := range s.replicas {
		if err := r.Elect(); err != nil {
			return err
		}
	}
	return nil
}

// leading is the replica that leads now, or an error naming the instant.
func (s *Sim) leading() (int, error) {
	if !s.elected {
		return -1, fmt.Errorf("no leader election: add a standby replica first")
	}
	if i := faults.Leader(s.replicas); i >= 0 {
		return i, nil
	}
	return -1, fmt.Errorf("no replica leads at virtual %s", simulator.FormatElapsed(s.env.Sim.Elapsed()))
}

// stallLeader is lease-lost: the leader's API calls time out and its
// watches deliver nothing for the fault's window.
func (s *Sim) stallLeader(f faults.Fault) {
	d := f.Dur("for")
	i, err := s.leading()
	if err != nil {
		s.faults.Record(f, 0, err.Error())
		return
	}
	c := s.replicas[i].Ctl
	s.stalled = i
	s.faults.Stall(i, true)
	c.SetDelivery(func(simulator.WatchEvent) (time.Duration, bool) { return 0, true })
	s.faults.Record(f, d, fmt.Sprintf("operator replica %d's network stalls for %s: every API call it makes times out", i, d))
	s.env.Sim.Schedule(d, fmt.Sprintf("network of replica %d back", i), func() {
		s.faults.Stall(i, false)
		s.restoreDelivery(i)
	})
}

// injectPause is pause: f.At from now the leader's process is stopped for
// the fault's window (faults.Replica.PauseFor: no reconcile, no renewal,
// no timer of it runs; it resumes with its memory as it was).
func (s *Sim) injectPause(f faults.Fault) error {
	if !s.elected {
		return refuse(BackendSim, f, "it stops the leader of two replicas: add a standby replica first (a second operator replica is on standby under leader election)")
	}
	s.at(f, func() { s.pauseLeader(f) })
	return nil
}

func (s *Sim) pauseLeader(f faults.Fault) {
	d := f.Dur("for")
	i, err := s.leading()
	if err != nil {
		s.faults.Record(f, 0, err.Error())
		return
	}
	r := s.replicas[i]
	id := r.Identity()
	if !r.PauseFor(d) {
		s.faults.Record(f, 0, fmt.Sprintf("operator replica %d is down or already paused", i))
		return
	}
	s.stalled = i
	s.faults.Record(f, d, fmt.Sprintf("operator replica %d (%s) stopped for %s: no reconcile, no lease renewal, no timer of it runs; it resumes with its memory as it was", i, id, d))
}
