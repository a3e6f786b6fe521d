package cluster

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
	"github.com/lunadas/upgrade-operator/simulator"
)

// leaseKey is the operator's leader election Lease.
var leaseKey = types.NamespacedName{Namespace: "upgrade-operator-system", Name: manager.DefaultLeaderElectionID}

// leaderModel runs each operator replica's leader election as the manager
// does: simulator.LeaderElector (client-go's elector with
// controller-runtime's defaults and the manager's ReleaseOnCancel) on the
// Lease in the simulator's store. A replica's controller runs only while
// it leads; when it stops leading ("leader election lost") its process
// exits and is back RestartDelay later as a new candidate. A leader that
// cannot renew stops before a standby may take the lease — the property
// C10 checks from the history.
type leaderModel struct {
	s           *Sim
	electors    []*simulator.LeaderElector // by replica: its current incarnation's
	incarnation []int
}

// AddStandbyReplica implements SimOnly: replica 1 starts as a standby
// (its controller runs nothing until it leads); replica 0 takes the lease.
func (s *Sim) AddStandbyReplica(context.Context) error {
	if s.leader != nil {
		return fmt.Errorf("a standby replica is already running")
	}
	customize, wrap := s.hooks(1)
	standby := s.env.AddOperator(fmt.Sprintf("%s-1", simrun.OperatorName), customize, wrap)
	standby.Crash()
	s.ops = append(s.ops, standby)
	l := &leaderModel{s: s, electors: make([]*simulator.LeaderElector, len(s.ops)), incarnation: make([]int, len(s.ops))}
	s.leader = l
	for i := range s.ops {
		if err := l.elect(i); err != nil {
			return err
		}
	}
	return nil
}

// elect runs a new incarnation of replica i as a candidate.
func (l *leaderModel) elect(i int) error {
	l.incarnation[i]++
	sim, ctl := l.s.env.Sim, l.s.ops[i]
	name := fmt.Sprintf("%s-%d", simrun.OperatorName, i)
	le, err := sim.NewLeaderElector(simulator.LeaderElectionConfig{
		Lease: leaseKey, Identity: fmt.Sprintf("%s_%d", name, l.incarnation[i]), ReleaseOnCancel: true,
		Client: leaseClient{Client: sim.ClientFor(name + "/lease"), f: l.s.faults, replica: i},
		Callbacks: simulator.LeaderCallbacks{
			OnStartedLeading: func() {
				if ctl.Crashed() {
					ctl.Restart()
				}
			},
			OnStoppedLeading: func() {
				ctl.Crash()
				sim.Schedule(RestartDelay, "restart of replica "+name, func() {
					if err := l.elect(i); err != nil {
						panic(err) // the same configuration was accepted before
					}
				})
			},
		},
	})
	if err != nil {
		return err
	}
	l.electors[i] = le
	le.Run()
	return nil
}

// leaseClient is a replica's client for its Lease: its calls time out
// while the replica is stalled, as the operator's own calls do.
type leaseClient struct {
	client.Client
	f       *faults.Boundary
	replica int
}

func (c leaseClient) stalled() error { return c.f.Stalled(c.replica) }

func (c leaseClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.stalled(); err != nil {
		return err
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c leaseClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.stalled(); err != nil {
		return err
	}
	return c.Client.Create(ctx, obj, opts...)
}

func (c leaseClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.stalled(); err != nil {
		return err
	}
	return c.Client.Update(ctx, obj, opts...)
}

// leader is the replica that leads now, or an error naming the instant.
func (s *Sim) leading() (int, error) {
	if s.leader == nil {
		return -1, fmt.Errorf("no leader election: add a standby replica first")
	}
	for j, le := range s.leader.electors {
		if le.Leading() {
			return j, nil
		}
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
	c := s.ops[i]
	s.faults.Stall(i, true)
	c.SetDelivery(func(simulator.WatchEvent) (time.Duration, bool) { return 0, true })
	s.faults.Record(f, d, fmt.Sprintf("operator replica %d's network stalls for %s: every API call it makes times out", i, d))
	s.env.Sim.Schedule(d, fmt.Sprintf("network of replica %d back", i), func() {
		s.faults.Stall(i, false)
		c.SetDelivery(nil)
	})
}
