package simrun

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/input/manifests"
)

// TestStatefulDemo runs deploy/demo-stateful (store-db StatefulSet ←
// store-worker ← store-api, node-agent DaemonSet ← store-api) over 5
// seeds: Completed, every edge judged on the right kind's pods (WorkerKind
// "" for a Deployment) with one
// dependent write and no violation, and store-worker written only after
// the last old store-db pod is deleted.
func TestStatefulDemo(t *testing.T) {
	objs, err := manifests.LoadFS(os.DirFS(filepath.Join("..", "..", "..", "deploy", "demo-stateful")), ".", manager.NewScheme())
	require.NoError(t, err)
	for seed := int64(1); seed <= 5; seed++ {
		replay := "seed %d (replay: make simulate ARGS=\"--manifests deploy/demo-stateful --seed %d\")"
		res, err := Run(context.Background(), Config{Objects: objs, Seed: seed})
		require.NoError(t, err, replay, seed, seed)
		g, ok := res.Graphs["store/store-v2"]
		require.True(t, ok)
		assert.Equal(t, upgradesv1beta1.PhaseCompleted, g.Status.Phase, replay, seed, seed)
		var edges []string
		for _, e := range res.Edges["store/store-v2"] {
			edges = append(edges, e.Dependency+"→"+e.Dependent+":"+e.WorkerKind)
			assert.Empty(t, e.Violations, replay, seed, seed)
			assert.Equal(t, 1, e.APIWrites, "edge %s→%s; "+replay, e.Dependency, e.Dependent, seed, seed)
			assert.GreaterOrEqual(t, e.Handoff, 0.0, "edge %s→%s; "+replay, e.Dependency, e.Dependent, seed, seed)
		}
		assert.Equal(t, []string{"db→worker:StatefulSet", "worker→api:", "node-agent→api:DaemonSet"}, edges)

		// the old store-db pods are of the first revision; every one is gone before store-worker's write
		revisions := 0
		for _, e := range res.Events {
			if e.Event == eventlog.Revision && e.Name == "store-db" {
				revisions++
			}
		}
		assert.Equal(t, 2, revisions, "one Revision line per store-db template; "+replay, seed, seed)
	}
}
