package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func simulate(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := newCommand(&out)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	return out.String(), err
}

func TestFaultsRunPrintsFaultLinesAndVerdict(t *testing.T) {
	out, err := simulate(t, "--seed", "3", "--faults", "conflict@1:n=5,crash@20s:down=3s")
	require.NoError(t, err, out)
	assert.Contains(t, out, "schedule: seed=3 scenario=demo faults=conflict@1:n=5,crash@20s:down=3s")
	assert.Contains(t, out, "fault conflict@1:n=5: the next 5 writes of the operator fail")
	assert.Contains(t, out, "fault crash@20s:down=3s: operator-0 killed, restarts in 3s with a cold cache")
	assert.Contains(t, out, "OK: seed=3 scenario=demo faults=conflict@1:n=5,crash@20s:down=3s: Completed as expected, no violation")
}

func TestRandomFaultsReplayTheSeedsSchedule(t *testing.T) {
	a, err := simulate(t, "--seed", "26", "--faults", "random", "--quiet")
	require.NoError(t, err)
	b, err := simulate(t, "--seed", "26", "--faults", "random", "--quiet")
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.Contains(t, a, "OK: seed=26 scenario=graph-mixed faults=crash@8:down=1.484s,gitops-revert@22.932s:dep=db:every=15s:for=27s,")
}

func TestScenarioAndFaultErrorsAreOneLine(t *testing.T) {
	for args, want := range map[string]string{
		"--faults explode@3":            `--faults: fault "explode@3": unknown kind "explode"`,
		"--scenario huge":               `unknown scenario "huge" (built-in: demo, graph-chain, graph-cross-namespace, graph-diamond, graph-mixed, graph-wide, recreate, single, wide)`,
		"--seeds 2 --scenario huge":     `unknown scenario "huge"`,
		"--faults node-lost@3":          "a virtual time since the upgrades were created",
		"--crash-sweep --scenario huge": `unknown scenario "huge"`,
	} {
		_, err := simulate(t, strings.Fields(args)...)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), want, args)
		assert.NotContains(t, err.Error(), "\n", args)
	}
}

// A fault aimed at a graph component acts on it and is judged per graph;
// a pairing without meaning is refused in one line.
func TestFaultsAimAtGraphComponents(t *testing.T) {
	out, err := simulate(t, "--seed", "1", "--scenario", "graph-diamond", "--faults", "bad-image:dep=indexer")
	require.NoError(t, err, out)
	assert.Contains(t, out, "fault bad-image:dep=indexer: component indexer (deployment shop/shop-indexer) of upgrade shop/shop-v3 targets registry.example.com/shop-indexer:does-not-exist")
	assert.Contains(t, out, "OK: seed=1 scenario=graph-diamond faults=bad-image:dep=indexer: Failed as expected, no violation")
	_, err = simulate(t, "--scenario", "graph-mixed", "--faults", "never-ready:dep=db", "--quiet")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fault never-ready:dep=db cannot act on component db (statefulset store/store-db) of upgrade store/store-v2: a StatefulSet has no progress deadline")
	assert.NotContains(t, err.Error(), "\n")
}

func TestSeedsPrintsTheSummary(t *testing.T) {
	out, err := simulate(t, "--seeds", "4", "--seed", "20", "--progress=false")
	require.NoError(t, err, out)
	for _, want := range []string{"runs                 4", "(seeds 20–23 over 9 built-in scenarios)", "runs per scenario: ", "completed", "failed as expected",
		"virtual p50 / p99", "wall time", "runs/s", "virtual:wall", "\nviolations: 0\n"} {
		assert.Contains(t, out, want)
	}
}

func TestFailingScheduleIsShrunkToOneCommand(t *testing.T) {
	// the API Deployment is missing: the upgrade ends Failed whatever the
	// faults, where the schedule demands Completed
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(worker), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "up.yaml"), []byte(strings.Replace(upgrade, "%s", ", containerName: worker", 1)), 0o644))
	out, err := simulate(t, "--manifests", dir, "--seed", "5", "--faults", "crash@3,node-lost@0s,edit@1s", "--quiet")
	require.Error(t, err)
	assert.Contains(t, out, "FAILED: seed=5 scenario=manifests faults=crash@3,node-lost@0s,edit@1s")
	assert.Contains(t, out, "expected Completed, ended Failed: api: deployment job-system/job-api not found")
	assert.Contains(t, out, "shrunk from 3 to 0 fault(s)")
	assert.Equal(t, `unexpected terminal state (replay: make simulate ARGS="--manifests `+dir+` --seed 5 --faults none")`, err.Error())
}

func TestTimelineIsWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.svg")
	out, err := simulate(t, "--quiet", "--faults", "node-lost@20s", "--timeline", path)
	require.NoError(t, err, out)
	svg, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(svg), "<svg "))
	assert.Contains(t, string(svg), "⚡ node-lost@20s")
	assert.Contains(t, string(svg), "Deployment job-worker")
}

// -o json of a --faults run: one object with the verdict, the fired
// faults and, on a failure, the violations, the artifacts and the shrunk
// replay; no transcript.
func TestFaultsJSON(t *testing.T) {
	out, err := simulate(t, "--seed", "3", "--faults", "conflict@1:n=5,crash@20s:down=3s", "-o", "json")
	require.NoError(t, err, out)
	var ok faultsJSON
	require.NoError(t, json.Unmarshal([]byte(out), &ok), out)
	assert.Equal(t, "ok", ok.Verdict)
	assert.Equal(t, "Completed", ok.Expected)
	require.Len(t, ok.Fired, 2)
	assert.Equal(t, "crash@20s:down=3s", ok.Fired[1].Fault)
	assert.InDelta(t, 20, ok.Fired[1].StartSeconds, 1e-9)
	assert.Equal(t, "operator-0 killed, restarts in 3s with a cold cache", ok.Fired[1].Note)
	assert.Empty(t, ok.Violations)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(worker), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "up.yaml"), []byte(strings.Replace(upgrade, "%s", ", containerName: worker", 1)), 0o644))
	out, err = simulate(t, "--manifests", dir, "--seed", "5", "--faults", "crash@3,edit@1s", "-o", "json", "--events", filepath.Join(dir, "e.jsonl"))
	require.Error(t, err)
	assert.Equal(t, exitViolation, exitCode(err))
	var bad faultsJSON
	require.NoError(t, json.Unmarshal([]byte(out), &bad), out)
	assert.Equal(t, "violation", bad.Verdict)
	assert.Equal(t, exitViolation, bad.ExitCode)
	assert.Contains(t, bad.Violations[0], "expected Completed, ended Failed: api: deployment job-system/job-api not found")
	assert.NotEmpty(t, bad.Artifacts)
	assert.Equal(t, `make simulate ARGS="--manifests `+dir+` --seed 5 --faults none"`, bad.Shrunk)
}
