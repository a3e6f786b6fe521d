package simrun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/input/manifests"
	"github.com/lunadas/upgrade-operator/simulator"
)

// graphDemoDir is deploy/demo-graph, the diamond that
// `make simulate ARGS="--manifests deploy/demo-graph"` runs.
var graphDemoDir = filepath.Join("..", "..", "..", "deploy", "demo-graph")

func graphDemoObjects(t *testing.T) []client.Object {
	t.Helper()
	objs, err := manifests.LoadFS(os.DirFS(graphDemoDir), ".", manager.NewScheme())
	require.NoError(t, err)
	return objs
}

// TestGraphDemoTranscript is the golden test of the graph demo: the
// transcript of deploy/demo-graph (db ← {worker, indexer} ← api, applied
// at v1beta1) with seed 1. Regenerate with
// `go test ./scenarios/sim/simrun -rewrite` and review the diff.
func TestGraphDemoTranscript(t *testing.T) {
	var tr bytes.Buffer
	res, err := Run(context.Background(), Config{Objects: graphDemoObjects(t), Seed: 1, Transcript: &tr})
	require.NoError(t, err, "replay: make simulate ARGS=\"--manifests deploy/demo-graph --seed 1\"")
	golden := filepath.Join("testdata", "demo-graph-seed1.transcript")
	if *rewrite {
		require.NoError(t, os.WriteFile(golden, tr.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -rewrite to create it")
	assert.Equal(t, string(want), tr.String())

	g, ok := res.Graphs["shop/shop-v3"]
	require.True(t, ok, "shop/shop-v3 is judged as a graph")
	assert.Equal(t, upgradesv1beta1.PhaseCompleted, g.Status.Phase)
	assert.Equal(t, "4/4", g.Status.RolledOut)
	var edges []string
	for _, e := range res.Edges["shop/shop-v3"] {
		edges = append(edges, e.Dependency+"→"+e.Dependent)
	}
	assert.Equal(t, []string{"db→worker", "db→indexer", "worker→api", "indexer→api"}, edges)
}

// write is one operator write of a new image to a Deployment: the
// operator's reconcile call that made it (1-based) and its virtual time.
type write struct {
	pass int
	at   time.Time
}

// TestGraphDemoWaves: in the diamond, the operator writes worker and
// indexer in the same reconcile pass (so at the same virtual time) once
// db is rolled out, and api in a later pass, after the last old pod of
// both worker and indexer is gone — over 10 seeds.
func TestGraphDemoWaves(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		var pass int
		writes := map[string][]write{}
		cfg := Config{Objects: graphDemoObjects(t), Seed: seed,
			Wrap: func(r reconcile.Reconciler) reconcile.Reconciler {
				return reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
					pass++
					return r.Reconcile(ctx, req)
				})
			},
			Observe: func(ev simulator.WatchEvent) {
				d, ok := ev.Object.(*appsv1.Deployment)
				if !ok || ev.Type != watch.Modified {
					return
				}
				old := ev.Old.(*appsv1.Deployment)
				if old.Spec.Template.Spec.Containers[0].Image != d.Spec.Template.Spec.Containers[0].Image {
					writes[d.Name] = append(writes[d.Name], write{pass, ev.Time})
				}
			}}
		res, err := Run(context.Background(), cfg)
		replay := "seed %d (replay: make simulate ARGS=\"--manifests deploy/demo-graph --seed %d\")"
		require.NoError(t, err, replay, seed, seed)
		for _, d := range []string{"shop-db", "shop-worker", "shop-indexer", "shop-api"} {
			require.Len(t, writes[d], 1, "operator image writes of %s; "+replay, d, seed, seed)
		}
		db, worker, indexer, api := writes["shop-db"][0], writes["shop-worker"][0], writes["shop-indexer"][0], writes["shop-api"][0]
		assert.Equal(t, worker.pass, indexer.pass, "worker and indexer written in one pass; "+replay, seed, seed)
		assert.True(t, worker.at.Equal(indexer.at), "worker written at %s, indexer at %s; "+replay, worker.at, indexer.at, seed, seed)
		assert.Greater(t, worker.pass, db.pass, replay, seed, seed)
		assert.Greater(t, api.pass, worker.pass, "api written in a later pass than worker and indexer; "+replay, seed, seed)
		assert.True(t, api.at.After(worker.at), "api written at %s, worker and indexer at %s; "+replay, api.at, worker.at, seed, seed)

		for _, e := range res.Edges["shop/shop-v3"] {
			assert.Empty(t, e.Violations, "edge %s→%s; "+replay, e.Dependency, e.Dependent, seed, seed)
			assert.Equal(t, 1, e.APIWrites, "edge %s→%s; "+replay, e.Dependency, e.Dependent, seed, seed)
			assert.GreaterOrEqual(t, e.Handoff, 0.0, "edge %s→%s: the dependent is written after the dependency's last old pod is deleted; "+replay, e.Dependency, e.Dependent, seed, seed)
		}
		assert.Equal(t, upgradesv1beta1.PhaseCompleted, res.Graphs["shop/shop-v3"].Status.Phase, replay, seed, seed)
	}
}
