package manager

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeLock is a resourcelock.Interface whose writes fail while fail is set.
type fakeLock struct {
	id   string
	fail error
}

func (l *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	return nil, nil, nil
}
func (l *fakeLock) Create(context.Context, resourcelock.LeaderElectionRecord) error { return l.fail }
func (l *fakeLock) Update(context.Context, resourcelock.LeaderElectionRecord) error { return l.fail }
func (l *fakeLock) RecordEvent(string)                                              {}
func (l *fakeLock) Identity() string                                                { return l.id }
func (l *fakeLock) Describe() string                                                { return "ns/lease" }

// The guard trusts only this process's own successful writes of the
// Lease, for less than the renew deadline, measured from when the write
// was sent: a process paused for longer (its clock jumps on resume) is
// refused until the elector renews again.
func TestLeaseGuardTrustsOnlyARecentOwnRenewal(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))
	lock := &fakeLock{id: "me_1"}
	g := NewLeaseGuard(lock, clk, RenewDeadline)
	ctx := context.Background()

	require.ErrorContains(t, g.Held(), "has not acquired", "before the first acquisition")

	require.NoError(t, g.Create(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me_1"}))
	assert.NoError(t, g.Held(), "just acquired")

	clk.Step(RenewDeadline - time.Millisecond)
	assert.NoError(t, g.Held(), "within the renew deadline")
	clk.Step(time.Millisecond)
	assert.ErrorContains(t, g.Held(), "longer than the renew deadline", "at the renew deadline")

	require.NoError(t, g.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me_1"}))
	assert.NoError(t, g.Held(), "renewed")

	clk.Step(30 * time.Second) // paused (SIGSTOP), then continued
	assert.Error(t, g.Held(), "a resumed process acts on no stale renewal")

	lock.fail = errors.New("the Lease was updated by someone else")
	assert.Error(t, g.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "me_1"}))
	assert.Error(t, g.Held(), "a failed renewal is no renewal")

	lock.fail = nil
	require.NoError(t, g.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: ""}))
	assert.Error(t, g.Held(), "a release (no holder) is no renewal")
	require.NoError(t, g.Update(ctx, resourcelock.LeaderElectionRecord{HolderIdentity: "other_2"}))
	assert.Error(t, g.Held(), "another holder's record is no renewal of ours")
}

// Building the guard leaves the caller's config alone: controller-runtime's
// NewResourceLock sets a 5 s request timeout and its user agent on the
// config it gets, which on a shared config cut every later watch (the
// platform e2e's table watch) after 5 s.
func TestNewLeaseGuardLeavesTheConfigAlone(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1", UserAgent: "caller"}
	_, err := newLeaseGuard(cfg, DefaultLeaderElectionID, "upgrade-operator-system")
	require.NoError(t, err)
	assert.Zero(t, cfg.Timeout)
	assert.Equal(t, "caller", cfg.UserAgent)
}

// The lock's event broadcaster starts with the lock's recorder and is shut
// down when the manager stops (the runnable needs no leadership, so a
// standby's is shut down too): a recorder obtained afterwards belongs to a
// new broadcaster.
func TestTheLeaseEventBroadcasterStopsWithTheManager(t *testing.T) {
	g, err := newLeaseGuard(&rest.Config{Host: "https://127.0.0.1:1"}, DefaultLeaderElectionID, "upgrade-operator-system")
	require.NoError(t, err)
	require.NotNil(t, g.events)
	assert.False(t, g.events.NeedLeaderElection())
	g.events.mu.Lock()
	started := g.events.broadcaster
	g.events.mu.Unlock()
	require.NotNil(t, started, "NewResourceLock asked for the recorder, which started the broadcaster")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.events.Start(ctx) }()
	cancel()
	require.NoError(t, <-done)
	g.events.mu.Lock()
	defer g.events.mu.Unlock()
	assert.Nil(t, g.events.broadcaster, "the broadcaster was shut down")
}

// RenewalHeld, the guard's decision on its own: the bound is exclusive,
// a zero renewal was never made, and the error names the Lease and the
// renewal's age.
func TestRenewalHeld(t *testing.T) {
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(now)
	for _, tc := range []struct {
		name    string
		renewed time.Time
		want    string // "" = held
	}{
		{"never renewed", time.Time{}, "has not acquired the leader-election Lease ns/lease"},
		{"just renewed", now, ""},
		{"within the deadline", now.Add(-RenewDeadline + time.Millisecond), ""},
		{"at the deadline", now.Add(-RenewDeadline), "ns/lease 10s ago (longer than the renew deadline, 10s)"},
		{"paused 30 s", now.Add(-30 * time.Second), "30s ago"},
	} {
		err := RenewalHeld("ns/lease", tc.renewed, clk, RenewDeadline)
		if tc.want == "" {
			assert.NoError(t, err, tc.name)
		} else {
			assert.ErrorContains(t, err, tc.want, tc.name)
		}
	}
}
