package sweep

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/faults/mutants"
)

func TestSampledSweepOfTheDemo(t *testing.T) {
	started, done := 0, 0
	rep, err := Run(context.Background(), Config{Scenario: "demo", Seed: 1, Stride: 37, Workers: 1,
		Started: func(n int) { started = n }, Done: func() { done++ }})
	require.NoError(t, err)
	assert.Greater(t, rep.Calls, 300, "reads are API calls in the sweep")
	assert.Equal(t, (rep.Calls+36)/37, rep.Runs)
	assert.Equal(t, rep.Runs, started)
	assert.Equal(t, rep.Runs, done)
	assert.Empty(t, rep.Failures)
	assert.Contains(t, rep.String(), "demo")
}

// TestMutantsCaughtByTheSweepThroughTheOneJudge: the crash sweep judges
// every crash point with the one judge; the counters-only mutant on the
// demo, the any-dependency mutant on the diamond and the early-completed
// mutant (only its status claims are wrong: judged from the recorded
// calls) on the chain fail it, with the porcupine model's verdict among
// the violations.
func TestMutantsCaughtByTheSweepThroughTheOneJudge(t *testing.T) {
	for _, c := range []struct {
		scenario string
		mutant   mutants.Mutant
		stride   int
	}{{"demo", mutants.CountersOnly, 37}, {"graph-diamond", mutants.AnyDependency, 200}, {"graph-chain", mutants.EarlyCompleted, 300}} {
		rep, err := Run(context.Background(), Config{Scenario: c.scenario, Seed: 1, Stride: c.stride, Workers: 2, Reconciler: c.mutant.Policy.Customize})
		require.NoError(t, err, c.scenario)
		require.NotEmpty(t, rep.Failures, "%s: %s not caught in %d runs", c.scenario, c.mutant.Name(), rep.Runs)
		for _, f := range rep.Failures {
			assert.True(t, slices.ContainsFunc(f.Violations, func(v string) bool { return strings.HasPrefix(v, "porcupine: history is Illegal") }),
				"%s: %s: %v", c.scenario, f.Schedule.Spec(), f.Violations)
		}
	}
}

func TestCheckWantsEachImageWrittenOnce(t *testing.T) {
	o := faults.Run(context.Background(), faults.RunConfig{Schedule: faults.Schedule{Seed: 1, Scenario: "demo",
		Faults: []faults.Fault{CrashAfter(0)}}})
	require.False(t, o.Failed(), "%v", o.Violations)
	assert.Empty(t, Check(o))
	o.Writes = append(o.Writes, o.Writes[0])
	assert.Equal(t, []string{"deployment job-system/job-worker written 2 times with registry.example.com/job-worker:v2.0.0, want once"}, Check(o))
	assert.Equal(t, "crash@1", CrashAfter(0).String(), "down is the default, 2s")
}

// TestSampledSweepOfTheGraphs: the sweep covers the graph scenarios
// (chain, diamond, wide wave, cross-namespace, mixed kinds): every
// sampled crash point ends Completed with every component's workload
// written exactly once.
func TestSampledSweepOfTheGraphs(t *testing.T) {
	for _, name := range []string{"graph-chain", "graph-diamond", "graph-wide", "graph-cross-namespace", "graph-mixed"} {
		rep, err := Run(context.Background(), Config{Scenario: name, Seed: 1, Stride: 400, Workers: 2})
		require.NoError(t, err, name)
		assert.GreaterOrEqual(t, rep.Runs, 2, name)
		for _, f := range rep.Failures {
			t.Errorf("%s: %s: %v", name, f.Schedule.Spec(), f.Violations)
		}
	}
}

// TestCheckCoversEveryComponent: on the mixed-kind graph the write-once
// check names the StatefulSet and DaemonSet components too.
func TestCheckCoversEveryComponent(t *testing.T) {
	o := faults.Run(context.Background(), faults.RunConfig{Schedule: faults.Schedule{Seed: 1, Scenario: "graph-mixed",
		Faults: []faults.Fault{CrashAfter(0)}}})
	require.False(t, o.Failed(), "%v", o.Violations)
	assert.Empty(t, Check(o))
	var kept []faults.Write
	for _, w := range o.Writes {
		if w.Deployment != "statefulset/store/store-db" && w.Deployment != "daemonset/store/node-agent" {
			kept = append(kept, w)
		}
	}
	require.Len(t, kept, len(o.Writes)-2, "one write of each of store-db and node-agent: %+v", o.Writes)
	o.Writes = kept
	assert.ElementsMatch(t, []string{
		"statefulset store/store-db (component db of store/store-v2) written 0 times with registry.example.com/store-db:v2.0.0, want once",
		"daemonset store/node-agent (component node-agent of store/store-v2) written 0 times with registry.example.com/node-agent:v2.0.0, want once",
	}, Check(o))
}
