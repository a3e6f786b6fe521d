package platformsim

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// A replica that cannot vouch for its Lease (LeaseHeld errs: paused past
// its renew deadline) neither calls the VIM's writes nor patches the
// status, although the spec asks for an upgrade; once the Lease is
// renewed the same reconciler runs the upgrade to its end.
func TestAPlatformPassWithoutAFreshLeaseActsOnNothing(t *testing.T) {
	e, err := New(Options{Seed: 1, System: starlingx.DemoConfig(starlingx.Duplex, time.Time{})})
	require.NoError(t, err)
	defer e.Close()
	e.Start()
	require.NoError(t, e.RunUntil("observed", time.Hour, e.Observed))
	before, err := e.Upgrade()
	require.NoError(t, err)
	stale := errors.New("this replica last renewed the leader-election Lease 30s ago")
	asked := 0
	e.Reconciler.LeaseHeld = func() error { asked++; return stale }
	calls := len(e.VIM.Calls())
	require.NoError(t, e.Patch(`{"spec":{"release":{"platform":"starlingx-27.03.0","kubernetes":"v1.35.0"}}}`))
	require.NoError(t, e.RunFor(10*time.Minute))

	require.Greater(t, asked, 1, "the reconciler asked whether it holds the Lease on every pass")
	for _, c := range e.VIM.Calls()[calls:] {
		switch c.Op {
		case "create", "apply", "abort", "delete", "swact":
			t.Fatalf("a pass without a fresh Lease called the VIM's %s at %s", c.Op, c.At)
		}
	}
	held, err := e.Upgrade()
	require.NoError(t, err)
	require.Equal(t, before.Status, held.Status, "a pass without a fresh Lease patched the status")
	require.Empty(t, e.Creates(), "no strategy was created")

	e.Reconciler.LeaseHeld = func() error { return nil }
	require.NoError(t, e.RunUntil("settled", 12*time.Hour, e.Settled))
	require.NotEmpty(t, e.Creates(), "with the Lease renewed the upgrade ran")
	require.Equal(t, "starlingx-27.03.0 / v1.35.0", e.SystemRuns())
}
