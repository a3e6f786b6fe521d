package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
	"github.com/lunadas/upgrade-operator/simulator"
)

// Leader election timings: controller-runtime's defaults.
const (
	LeaseDuration = 15 * time.Second
	RenewDeadline = 10 * time.Second
	RetryPeriod   = 2 * time.Second
)

// leaderModel is client-go's leader election in virtual time, as
// controller-runtime's manager uses it: every RetryPeriod each replica
// renews the lease it holds or tries to take an expired one. A leader that
// cannot renew for RenewDeadline stops leading and its process exits (its
// controller crashes); a standby whose attempt finds the lease unrenewed for
// LeaseDuration takes it and starts its controller with a cold cache.
// Because RenewDeadline < LeaseDuration, the old leader has stopped before a
// new one starts — the property C10 checks from the history.
type leaderModel struct {
	s        *Sim
	holder   int
	renewed  time.Time
	replicas []*candidate
}

type candidate struct {
	ctl       *simulator.Controller
	leading   bool
	lastRenew time.Time
}

// AddStandbyReplica implements SimOnly: replica 1 starts as a standby
// (its controller runs nothing until it leads); replica 0 holds the lease.
func (s *Sim) AddStandbyReplica(context.Context) error {
	if s.leader != nil {
		return fmt.Errorf("a standby replica is already running")
	}
	now := s.env.Sim.Now()
	customize, wrap := s.hooks(1)
	standby := s.env.AddOperator(fmt.Sprintf("%s-1", simrun.OperatorName), customize, wrap)
	standby.Crash()
	s.ops = append(s.ops, standby)
	l := &leaderModel{s: s, holder: 0, renewed: now, replicas: []*candidate{
		{ctl: s.ops[0], leading: true, lastRenew: now},
		{ctl: standby},
	}}
	s.leader = l
	for i := range l.replicas {
		l.schedule(i)
	}
	return nil
}

func (l *leaderModel) schedule(i int) {
	l.s.env.Sim.Schedule(RetryPeriod, fmt.Sprintf("leader election of replica %d", i), func() { l.tick(i) })
}

func (l *leaderModel) tick(i int) {
	defer l.schedule(i)
	c := l.replicas[i]
	now := l.s.env.Sim.Now()
	l.s.faults.mu.Lock()
	stalled := l.s.faults.stalled[i]
	l.s.faults.mu.Unlock()
	switch {
	case c.leading && !stalled:
		c.lastRenew, l.renewed = now, now
	case c.leading && now.Sub(c.lastRenew) >= RenewDeadline:
		c.leading = false // "leader election lost": the manager exits
		c.ctl.Crash()
	case !c.leading && !stalled && now.Sub(l.renewed) >= LeaseDuration:
		l.holder, l.renewed = i, now
		c.leading, c.lastRenew = true, now
		c.ctl.Restart()
	}
}

// StallLeader implements SimOnly: the leader's API calls time out and its
// watches deliver nothing for d.
func (s *Sim) StallLeader(_ context.Context, d time.Duration) error {
	if s.leader == nil {
		return fmt.Errorf("no leader election: add a standby replica first")
	}
	i := s.leader.holder
	c := s.leader.replicas[i].ctl
	s.faults.stall(i, true)
	c.SetDelivery(func(simulator.WatchEvent) (time.Duration, bool) { return 0, true })
	s.env.Sim.Schedule(d, fmt.Sprintf("network of replica %d back", i), func() {
		s.faults.stall(i, false)
		c.SetDelivery(nil)
	})
	return nil
}
