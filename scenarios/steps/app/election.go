package app

import (
	"context"
	"fmt"
	"time"

	"github.com/cucumber/godog"

	"github.com/lunadas/upgrade-operator/scenarios/cluster"
)

// registerElection binds the checks of the replicas under leader
// election (cluster.Elected): the simulator's and the real backend's
// out-of-process ones.
func (s *scenario) registerElection(sc *godog.ScenarioContext) {
	sc.Step(`^the frozen leader exited once it ran again and was restarted within (\d+) seconds?$`, s.frozenLeaderRestarted)
	sc.Step(`^every write the replicas' records attribute came from the replica holding the lease$`, s.writesUnderLease)
}

func (s *scenario) elected() (cluster.Elected, error) {
	e, ok := s.cl.(cluster.Elected)
	if !ok {
		return nil, fmt.Errorf("the %s backend runs no replicas under leader election: %w", s.cfg.Backend.Name(), cluster.ErrUnsupported)
	}
	return e, nil
}

// frozenLeaderRestarted waits (from now, after the fault's window) until
// the leader lease-lost froze has exited on losing its lease and a new
// process of its replica runs.
func (s *scenario) frozenLeaderRestarted(ctx context.Context, n int) error {
	e, err := s.elected()
	if err != nil {
		return err
	}
	return s.cl.Eventually(ctx, "the frozen leader exited and was restarted", time.Duration(n)*time.Second, e.FrozenLeaderRestarted)
}

// writesUnderLease: no write by a replica that did not hold the Lease;
// what could be attributed is logged with the scenario.
func (s *scenario) writesUnderLease(ctx context.Context) error {
	e, err := s.elected()
	if err != nil {
		return err
	}
	what, err := e.WritesUnderLease()
	if err != nil {
		return err
	}
	godog.Logf(ctx, "%s", what)
	return nil
}
