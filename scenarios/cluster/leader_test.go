package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/simulator"
)

// A killed leader renews nothing: the standby takes the lease once it
// expires, and the killed replica comes back as a new candidate.
func TestSimKilledLeaderLosesTheLeaseToTheStandby(t *testing.T) {
	ctx := t.Context()
	s, err := NewSim(ctx, Options{Scenario: "killed-leader", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddStandbyReplica(ctx); err != nil {
		t.Fatal(err)
	}
	if i, err := s.leading(); i != 0 || err != nil {
		t.Fatalf("leader after the standby was added = %d, %v; want replica 0", i, err)
	}
	fs, err := faults.ParseFaults("crash@0s:down=5s")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Inject(ctx, fs[0]); err != nil {
		t.Fatal(err)
	}
	standbyLeads := func(context.Context) (bool, error) { i, _ := s.leading(); return i == 1, nil }
	if err := s.Eventually(ctx, "the standby leads", time.Minute, standbyLeads); err != nil {
		t.Fatalf("%v (replica 0 was killed at 0s: its lease must expire)", err)
	}
	if s.Elapsed() < simulator.DefaultLeaseDuration {
		t.Errorf("the standby took the lease at %s, before the killed leader's lease expired (%s)", s.Elapsed(), simulator.DefaultLeaseDuration)
	}
	r0 := s.replicas[0]
	if !r0.Alive || r0.Incarnation != 2 || !r0.Ctl.Crashed() {
		t.Errorf("replica 0 after its restart: alive %v, incarnation %d, controller crashed %v; want a new incarnation standing by", r0.Alive, r0.Incarnation, r0.Ctl.Crashed())
	}
	if err := s.Consistently(ctx, "the standby keeps the lease", time.Minute, standbyLeads); err != nil {
		t.Fatal(err)
	}
}
