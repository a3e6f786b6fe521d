package simrun_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/anishathalye/porcupine"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/scenarios/faults/mutants"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
)

// TestCountersOnlyReadinessIsCaught proves the check can fail: with the
// readiness rule weakened to counters only (mutants.CountersOnly), the demo
// writes the API image while an old worker pod is still terminating.
func TestCountersOnlyReadinessIsCaught(t *testing.T) {
	res, err := simrun.Run(context.Background(), simrun.Config{Objects: simrun.DemoObjects(t), Seed: 1, Reconciler: mutants.CountersOnly.Policy.Customize})
	require.NoError(t, err)
	assert.NotEmpty(t, res.Reports["job-system/upgrade-v2"].Violations)
	require.NotNil(t, res.Judged)
	assert.Equal(t, porcupine.Illegal, res.Judged.Linearizable, "the one judge's model catches it from the event log alone")
	// its first illegal step: the status claiming UpgradingAPI (read from
	// the log, judge.LogClaims) before the API's write
	assert.Contains(t, res.Judged.Illegal, "phase UpgradingAPI claimed while the worker is not fully rolled out: old pod job-worker-")
	assert.Contains(t, res.Judged.Failed(), judge.CheckOrdering)
}

// TestGraphDemoAnyDependencyIsCaught proves the graph verdict can fail:
// with api decided on the faster of its two dependencies
// (mutants.AnyDependency), the worker → api edge is violated and
// judge.Verdict fails the run.
func TestGraphDemoAnyDependencyIsCaught(t *testing.T) {
	res, err := simrun.Run(context.Background(), simrun.Config{Objects: simrun.GraphDemoObjects(t), Seed: 1, Reconciler: mutants.AnyDependency.Policy.Customize})
	require.NoError(t, err)
	v := res.Reports["shop/shop-v3"].Violations
	require.NotEmpty(t, v)
	assert.Contains(t, v[0], "worker → api: ")
	assert.ErrorContains(t, judge.Verdict(res.Upgrades, res.Reports), "ordering violation in shop/shop-v3: worker → api: ")
	require.NotNil(t, res.Judged)
	assert.Equal(t, porcupine.Illegal, res.Judged.Linearizable)
	assert.Contains(t, res.Judged.Illegal, `component "api" image`)
	assert.Contains(t, res.Judged.Illegal, `while the dependency "worker" is not fully rolled out`)
}

// TestProductRunsPassTheOneJudge: the demos end with the one judge's OK.
func TestProductRunsPassTheOneJudge(t *testing.T) {
	for name, objs := range map[string]func(*testing.T) []client.Object{"demo": simrun.DemoObjects, "graph": simrun.GraphDemoObjects, "sidecar": simrun.SidecarObjects} {
		res, err := simrun.Run(context.Background(), simrun.Config{Objects: objs(t), Seed: 1})
		require.NoError(t, err, name)
		require.NotNil(t, res.Judged, name)
		assert.True(t, res.Judged.OK(), "%s: %v", name, res.Judged.Err())
	}
}

// TestSidecarFirstWorkerMutantIsCaught: the worker's pods list a proxy
// first, so every pod, old or new, has the same first image; the
// counters-only mutant writes the API while old worker pods still run and
// the hash-based check names one of them.
func TestSidecarFirstWorkerMutantIsCaught(t *testing.T) {
	res, err := simrun.Run(context.Background(), simrun.Config{Objects: simrun.SidecarObjects(t), Seed: 1, Reconciler: mutants.CountersOnly.Policy.Customize})
	require.NoError(t, err)
	v := res.Reports["mesh/upgrade-v2"].Violations
	require.NotEmpty(t, v)
	assert.Contains(t, v[0], "proxy=envoyproxy/envoy:v1.30.0, worker=registry.example.com/job-worker:v1.0.0")
}
