package fidelity

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The simulator's kubelet model against the real kubelet's rule
// (kuberuntime doBackOff with flowcontrol.Backoff, 10 s doubling): the
// first restart at once, then 10 s, 20 s, 40 s after each exit, each
// preceded by CrashLoopBackOff; every run exits 1 after 0.5 s.
func TestSimCrashLoopFollowsTheKubeletBackOff(t *testing.T) {
	samples, err := SimCrashLoop(context.Background(), 1, 4)
	require.NoError(t, err)
	cl := DeriveCrashLoop(samples)
	require.GreaterOrEqual(t, len(cl.Runs), 5)
	wantDelay := []float64{math.NaN(), 0, 10, 20, 40}
	for i, want := range wantDelay {
		r := cl.Runs[i]
		assert.Equal(t, int32(i), r.N)
		assert.InDelta(t, 0.5, r.Exited-r.Started, 1e-9, "run %d ran %.3fs", i, r.Exited-r.Started)
		if i == 0 {
			assert.True(t, math.IsNaN(r.Delay))
			continue
		}
		assert.InDelta(t, want, r.Delay, 1e-9, "restart %d", i)
		assert.Equal(t, int32(1), cl.Runs[i-1].ExitCode, "run %d exit code", i-1)
		if i >= 2 {
			assert.Equal(t, []string{"CrashLoopBackOff"}, r.Reasons, "restart %d", i)
		} else {
			assert.Empty(t, r.Reasons, "the first restart is immediate")
		}
	}
	assert.InDelta(t, 1.0, cl.FirstBackOff, 1e-9, "second exit at 1.0s")
	require.Len(t, cl.BackOffMessages, 4, "10s, 20s, 40s, 1m20s")
	assert.Regexp(t, `^back-off 10s restarting failed container=worker pod=crashloop_fidelity\(.+\)$`, cl.BackOffMessages[0])
	assert.Regexp(t, `^back-off 1m20s restarting failed container=worker pod=crashloop_fidelity\(.+\)$`, cl.BackOffMessages[3])
}

func fp(v float64) *float64 { return &v }

// Samples shaped as the real kubelet reports them (whole-second times, a
// terminated state before the first restart, lastState of the exited run
// while waiting) give the runs and delays; the report names each
// difference with its figures.
func TestDeriveCrashLoopAndReport(t *testing.T) {
	real := []ContainerSample{
		{At: 0.2, State: "waiting", Reason: "ContainerCreating"},
		{At: 1.1, State: "running", Started: fp(1)},
		{At: 1.9, State: "terminated", Reason: "Error", Started: fp(1), Finished: fp(1)},
		{At: 2.6, Restarts: 1, State: "running", Started: fp(2), LastStarted: fp(1), LastFinished: fp(1), LastExitCode: 1},
		{At: 3.2, Restarts: 1, State: "waiting", Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container=worker pod=p_ns(uid)", LastStarted: fp(2), LastFinished: fp(3), LastExitCode: 1},
		{At: 14.1, Restarts: 2, State: "running", Started: fp(14), LastStarted: fp(2), LastFinished: fp(3), LastExitCode: 1},
	}
	cl := DeriveCrashLoop(real)
	require.Len(t, cl.Runs, 3)
	assert.Equal(t, []string{"ContainerCreating"}, cl.Runs[0].Reasons)
	assert.InDelta(t, 0.7, cl.Runs[1].Delay, 1e-9, "run 0 seen exited at 1.9, run 1 running at 2.6")
	assert.InDelta(t, 10.9, cl.Runs[2].Delay, 1e-9, "run 1 seen exited at 3.2, run 2 running at 14.1")
	assert.Equal(t, []string{"CrashLoopBackOff"}, cl.Runs[2].Reasons)
	assert.InDelta(t, 3.2, cl.FirstBackOff, 1e-9)

	sim, err := SimCrashLoop(context.Background(), 1, 2)
	require.NoError(t, err)
	c := CrashLoopComparison{Sim: DeriveCrashLoop(sim), Real: cl,
		SimVerdict:  Verdict{Phase: "Failed", Message: "CrashLoopBackOff after 3 restarts", After: 32},
		RealVerdict: Verdict{Phase: "Failed", Message: "CrashLoopBackOff after 3 restarts", After: 40}}
	diffs := CrashLoopDifferences(c)
	assert.Contains(t, diffs, "first CrashLoopBackOff: sim 1.0 s, real 3.2 s")
	assert.NotContains(t, diffs, "restart 1: waiting reasons before it sim [], real []", "equal reasons are no difference")
	var buf bytes.Buffer
	require.NoError(t, WriteCrashLoopReport(&buf, c))
	assert.Contains(t, buf.String(), "verdict after: sim 32.0 s, real 40.0 s (+8.0 s)")
}
