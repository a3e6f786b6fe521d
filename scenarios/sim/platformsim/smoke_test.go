package platformsim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

func TestSmokeMajor(t *testing.T) {
	for _, http := range []bool{false, true} {
		e, err := New(Options{Seed: 1, HTTP: http, System: starlingx.DemoConfig(starlingx.Duplex, time.Time{})})
		require.NoError(t, err)
		defer e.Close()
		e.Start()
		require.NoError(t, e.RunUntil("observed", time.Hour, e.Observed))
		require.NoError(t, e.Patch(`{"spec":{"release":{"platform":"starlingx-27.03.0","kubernetes":"v1.35.0"}}}`))
		err = e.RunUntil("settled", 12*time.Hour, e.Settled)
		u, _ := e.Upgrade()
		for _, ev := range e.Events() {
			t.Logf("%s %s %s %s", ev.At, ev.Type, ev.Reason, ev.Message)
		}
		t.Logf("status: %+v", u.Status.ActiveDeploy)
		t.Logf("creates: %v runs %s elapsed %s calls %d", e.Creates(), e.SystemRuns(), e.Elapsed(), len(e.VIM.Calls()))
		require.NoError(t, err)
	}
}
