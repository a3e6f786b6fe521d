package simrun

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/deploy"
	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/input/manifests"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden transcripts under testdata/")

func demoObjects(t *testing.T) []client.Object {
	t.Helper()
	objs, err := manifests.LoadFS(deploy.Demo, ".", manager.NewScheme())
	require.NoError(t, err)
	return objs
}

func runDemo(t *testing.T, seed int64) (transcript, events []byte, res *Result) {
	t.Helper()
	var tr, ev bytes.Buffer
	res, err := Run(context.Background(), Config{Objects: demoObjects(t), Seed: seed, Transcript: &tr, EventLog: &ev})
	require.NoError(t, err, "seed %d (replay: make simulate ARGS=\"--seed %d\")", seed, seed)
	return tr.Bytes(), ev.Bytes(), res
}

// TestDemoTranscript is the golden test of `make simulate`: the transcript of
// the demo run with seed 1. Regenerate with `go test ./scenarios/sim/simrun -rewrite`
// and review the diff.
func TestDemoTranscript(t *testing.T) {
	got, _, res := runDemo(t, 1)
	golden := filepath.Join("testdata", "demo-seed1.transcript")
	if *rewrite {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -rewrite to create it")
	assert.Equal(t, string(want), string(got))
	require.Len(t, res.Upgrades, 1)
	assert.Equal(t, upgradesv1alpha1.PhaseCompleted, res.Upgrades[0].Status.Phase)
}

func sidecarObjects(t *testing.T) []client.Object {
	t.Helper()
	objs, err := manifests.LoadFS(os.DirFS(filepath.Join("testdata", "sidecar")), ".", manager.NewScheme())
	require.NoError(t, err)
	return objs
}

// TestSidecarFirstWorkerCompletesInOrder: a worker whose pods list a proxy
// before the worker container upgrades with verdict OK (event log v2
// tells old pods by template hash; v1 called every pod old) — over 10 seeds.
func TestSidecarFirstWorkerCompletesInOrder(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		res, err := Run(context.Background(), Config{Objects: sidecarObjects(t), Seed: seed})
		require.NoError(t, err, "seed %d", seed)
		require.NoError(t, judge.Verdict(res.Upgrades, res.Reports), "seed %d", seed)
		rep := res.Reports["mesh/upgrade-v2"]
		assert.Equal(t, map[string]int{"registry.example.com/job-worker:v2.0.0": 1}, rep.WorkerWrites, "seed %d", seed)
		assert.Equal(t, 1, rep.APIWrites, "seed %d", seed)
		assert.GreaterOrEqual(t, rep.Handoff, 0.0, "seed %d", seed)
	}
}

// TestDemoReplaysByteForByte: the same seed gives the same transcript and event log.
func TestDemoReplaysByteForByte(t *testing.T) {
	tr1, ev1, _ := runDemo(t, 42)
	tr2, ev2, _ := runDemo(t, 42)
	assert.Equal(t, string(tr1), string(tr2))
	assert.Equal(t, string(ev1), string(ev2))
	tr3, _, _ := runDemo(t, 43)
	assert.NotEqual(t, string(tr1), string(tr3), "another seed draws other kwok jitter")
}

// TestDemoEventLogOrdering reads the JSONL event log as a user would: the
// first job-api DeploymentWrite of the new image comes after the last
// PodDeleted of a job-worker pod with the old image — over 20 seeds.
func TestDemoEventLogOrdering(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		_, raw, res := runDemo(t, seed)
		var lastOldWorkerDeleted, firstAPIWrite = -1, -1
		events, err := eventlog.Read(bytes.NewReader(raw), "e.jsonl")
		require.NoError(t, err)
		var oldHash string // the worker's template hash before the operator's write
		for i, e := range events {
			switch {
			case e.Event == eventlog.DeploymentWrite && e.Name == "job-worker" && oldHash == "":
				oldHash = e.HashAfter
			case e.Event == eventlog.PodDeleted && e.Deployment == "job-worker" && e.Hash == oldHash:
				lastOldWorkerDeleted = i
			case e.Event == eventlog.DeploymentWrite && e.Name == "job-api" && e.Image == "registry.example.com/job-api:v2.0.0" && firstAPIWrite < 0:
				firstAPIWrite = i
			}
		}
		require.Positive(t, lastOldWorkerDeleted, "seed %d", seed)
		require.Positive(t, firstAPIWrite, "seed %d", seed)
		assert.Greater(t, firstAPIWrite, lastOldWorkerDeleted, "seed %d (replay: make simulate ARGS=\"--seed %d --events e.jsonl\")", seed, seed)
		rep := res.Reports["job-system/upgrade-v2"]
		assert.Empty(t, rep.Violations, "seed %d", seed)
		assert.Equal(t, map[string]int{"registry.example.com/job-worker:v2.0.0": 1}, rep.WorkerWrites, "seed %d", seed)
		assert.Equal(t, 1, rep.APIWrites, "seed %d", seed)
	}
}
