package realbench

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A synthetic run: the operator hands off in 20–40 ms, the poller writes
// the API 9 s early; the table shows both and the targets are judged.
func TestTableAndTargets(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Sizes, cfg.Scopes = []int{0, 5000}, []string{"all"}
	tl := func(ww, wg, aw, ag float64) Moments {
		return Moments{WorkerWrite: ww, WorkerGone: wg, APIWrite: aw, APIGone: ag, Completed: ag + 0.03}
	}
	var cases []CaseResult
	for i, h := range []float64{0.02, 0.03, 0.04} {
		op := CaseResult{Namespace: "op" + string(rune('a'+i)), Driver: DriverOperator, Fixed: true, Timing: "fixed", Start: 0,
			Moments: tl(0.05, 25.05, 25.05+h, 50.05+h), PollerWorkerDone: -1, WorkerStatusSettled: 25.06}
		alone := CaseResult{Namespace: "al" + string(rune('a'+i)), Driver: DriverAlone, Fixed: true, Timing: "fixed", Twin: op.Namespace,
			Moments: tl(0.05, 25.05, 25.05+h, 50.05+h), PollerWorkerDone: -1}
		poll := CaseResult{Namespace: "po" + string(rune('a'+i)), Driver: DriverPoller, Fixed: true, Timing: "fixed",
			Moments: tl(0.01, 25.01, 16, 41), PollerWorkerDone: 15.9}
		poll.OldWorkerPodsAtAPIWrite = 2
		cases = append(cases, op, alone, poll)
	}
	res := &Result{Config: cfg, Latency: summarizeLatency(cases, cfg),
		Sim: &SimResult{File: "bench-sim.txt", Benchmarks: []SimBench{{Name: simBenchmark, Procs: 1, Samples: 6, RunsPerSec: 9, RunsPerCPUSec: 10}}},
		Scale: &ScaleResult{Rows: []ScaleRow{{Fillers: 0, Scope: "all", Upgrades: 4, Reconciles: 124, Requests: 27},
			{Fillers: 5000, Scope: "all", Upgrades: 4, Reconciles: 126, Requests: 28, WatchedFillers: 5000}}}}
	res.CheckTargets()
	require.Len(t, res.Targets, 4)
	met := map[string]bool{}
	for _, tc := range res.Targets {
		met[tc.Target[:10]] = tc.Met
	}
	assert.Equal(t, map[string]bool{"handoff p9": true, "ordering o": true, "≥ 500 si": false, "reconciles": true}, met)
	o, ok := res.Latency.Overhead(DriverOperator)
	require.True(t, ok)
	assert.InDelta(t, 0.08, o.Seconds, 1e-9, "start latency 50 ms + mean handoff 30 ms")
	assert.InDelta(t, 0.08, o.Components, 1e-9)
	g, _ := res.Latency.Group(DriverPoller, true)
	assert.Equal(t, 3, g.ViolatingUpgrades)
	var out bytes.Buffer
	res.WriteTable(&out)
	for _, want := range []string{"poller 2 s", "no ordering", "BenchmarkDemoRun", "cluster-wide", "[MISSED] ≥ 500"} {
		assert.Contains(t, out.String(), want)
	}
}

func TestLoadRowPrintsTheHandoffInThreeParts(t *testing.T) {
	res := &Result{Config: DefaultConfig(), Load: &ScaleRow{Fillers: 1000, Scope: "all", Upgrades: 2, ChurnRate: 20,
		Handoff:      Summarize([]float64{0.150, 0.090}),
		HandoffParts: &HandoffParts{Decision: Summarize([]float64{0.010, -0.005}), Fence: Summarize([]float64{0.100, 0.065}), Write: Summarize([]float64{0.040, 0.030})}}}
	var out bytes.Buffer
	res.WriteTable(&out)
	assert.Contains(t, out.String(), "status patch recording api Upgrading sent p50 -5 ms, p99 10 ms")
	assert.Contains(t, out.String(), "round trip, the optimistic lock the write waits for) p50 65 ms, p99 100 ms")
	assert.Contains(t, out.String(), "write seen by the driver p50 30 ms, p99 40 ms")
}
