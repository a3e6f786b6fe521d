package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
)

const worker = `apiVersion: apps/v1
kind: Deployment
metadata: {name: job-worker, namespace: job-system}
spec:
  replicas: 2
  selector: {matchLabels: {app: job-worker}}
  template:
    metadata: {labels: {app: job-worker}}
    spec:
      containers:
        - {name: worker, image: "registry.example.com/job-worker:v1"}
`

const api = `apiVersion: apps/v1
kind: Deployment
metadata: {name: job-api, namespace: job-system}
spec:
  replicas: 2
  selector: {matchLabels: {app: job-api}}
  template:
    metadata: {labels: {app: job-api}}
    spec:
      containers:
        - {name: api, image: "registry.example.com/job-api:v1"}
`

const upgrade = `apiVersion: upgrades.lunadas.dev/v1alpha1
kind: ApplicationUpgrade
metadata: {name: up, namespace: job-system}
spec:
  worker: {deploymentRef: {name: job-worker}, image: "registry.example.com/job-worker:v2"%s}
  api: {deploymentRef: {name: job-api}, image: "registry.example.com/job-api:v2", containerName: api}
`

// graph is a v1beta1 upgrade named %s of the job-system Deployments,
// its components given by %s (a YAML flow list).
const graph = `apiVersion: upgrades.lunadas.dev/v1beta1
kind: ApplicationUpgrade
metadata: {name: %s, namespace: job-system}
spec:
  components: %s
`

func graphOf(name, components string) string { return fmt.Sprintf(graph, name, components) }

const (
	workerC = `{name: worker, deploymentRef: {name: job-worker}, image: "registry.example.com/job-worker:v2", containerName: worker`
	apiC    = `{name: api, deploymentRef: {name: job-api}, image: "registry.example.com/job-api:v2", containerName: api`
)

func runWith(t *testing.T, files map[string]string, args ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	var out bytes.Buffer
	cmd := newCommand(&out)
	cmd.SetArgs(append([]string{"--manifests", dir}, args...))
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	return out.String(), err
}

func TestSimulateUserManifests(t *testing.T) {
	out, err := runWith(t, map[string]string{"app.yaml": worker + "---\n" + api, "up.yaml": strings.Replace(upgrade, "%s", ", containerName: worker", 1)})
	require.NoError(t, err)
	assert.Contains(t, out, "OK: 1 upgrade(s) completed")
	assert.Contains(t, out, "ordering violations: 0")
}

func TestSimulateBadInputGivesOneReadableLine(t *testing.T) {
	twoContainers := strings.Replace(worker, `        - {name: worker, image: "registry.example.com/job-worker:v1"}`,
		"        - {name: worker, image: \"registry.example.com/job-worker:v1\"}\n        - {name: sidecar, image: \"registry.example.com/proxy:v1\"}", 1)
	cases := []struct {
		name  string
		files map[string]string
		args  []string
		want  string
	}{
		{"unknown kind", map[string]string{"x.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"}, nil,
			`x.yaml: document 1: unknown kind "Widget" for apiVersion "example.com/v1": the simulator models Namespace (apiVersion v1), Deployment, StatefulSet, DaemonSet and ControllerRevision (apps/v1) and ApplicationUpgrade (upgrades.lunadas.dev/v1alpha1 or v1beta1): fix the kind or apiVersion`},
		{"misspelt kind", map[string]string{"up.yaml": strings.Replace(strings.Replace(upgrade, "%s", "", 1), "kind: ApplicationUpgrade", "kind: ApplicationUpgrad", 1)}, nil,
			`up.yaml: document 1: unknown kind "ApplicationUpgrad" for apiVersion "upgrades.lunadas.dev/v1alpha1": the simulator models Namespace`},
		{"graph cycle", map[string]string{"app.yaml": worker + "---\n" + api,
			"up.yaml": graphOf("cyc", "["+workerC+", dependsOn: [api]}, "+apiC+", dependsOn: [worker]}]")}, nil,
			"up.yaml: applicationupgrade job-system/cyc refused at admission: spec.components has a dependency cycle"},
		{"graph unknown dependsOn", map[string]string{"app.yaml": worker + "---\n" + api,
			"up.yaml": graphOf("unk", "["+workerC+"}, "+apiC+", dependsOn: [wrker]}]")}, nil,
			`up.yaml: applicationupgrade job-system/unk refused at admission: spec.components[api].dependsOn names "wrker", which is not a component: fix the name or add the component`},
		{"graph duplicate component name", map[string]string{"app.yaml": worker + "---\n" + api,
			"up.yaml": graphOf("dup", "["+workerC+"}, "+strings.Replace(apiC, "name: api,", "name: worker,", 1)+"}]")}, nil,
			`up.yaml: applicationupgrade job-system/dup refused at admission: spec.components has two components named "worker": names must be unique`},
		{"graph self-dependency", map[string]string{"app.yaml": worker + "---\n" + api,
			"up.yaml": graphOf("self", "["+workerC+", dependsOn: [worker]}, "+apiC+"}]")}, nil,
			`up.yaml: applicationupgrade job-system/self refused at admission: spec.components[worker] depends on itself: remove "worker" from its dependsOn`},
		{"graph same deployment twice", map[string]string{"app.yaml": worker + "---\n" + api,
			"up.yaml": graphOf("twice", "["+workerC+"}, "+strings.Replace(apiC, "{name: job-api}", "{name: job-worker}", 1)+"}]")}, nil,
			"up.yaml: applicationupgrade job-system/twice refused at admission: spec.components[worker] and spec.components[api] both reference deployment job-system/job-worker: each Deployment may appear once"},
		{"two upgrades claim one deployment", map[string]string{"app.yaml": worker + "---\n" + api,
			"up1.yaml": strings.Replace(upgrade, "%s", ", containerName: worker", 1), "up2.yaml": graphOf("second", "["+workerC+"}]")}, nil,
			"up2.yaml: applicationupgrade job-system/second refused at admission: spec.components[worker]: deployment job-system/job-worker is already being upgraded by applicationupgrade job-system/up: wait until that upgrade is Completed or Failed (or delete it), or remove this component"},
		{"manifests dir missing", nil, []string{"--manifests", "/nonexistent-simfix"}, "--manifests /nonexistent-simfix: no such directory"},
		{"manifests dir empty", map[string]string{"README.md": "x"}, nil, ": no *.yaml or *.yml files in it"},
		{"manifests is a file", nil, []string{"--manifests", "main_test.go"}, "--manifests main_test.go: not a directory: give the directory that holds the YAML manifests"},
		{"seed not a number", nil, []string{"--seed", "abc"}, `invalid argument "abc" for "--seed" flag: want an integer`},
		{"limit reached", map[string]string{"app.yaml": worker + "---\n" + api, "up.yaml": strings.Replace(upgrade, "%s", ", containerName: worker", 1)},
			[]string{"--limit", "5s"}, "upgrade job-system/up not finished after 5s of virtual time (phase "},
		{"missing worker deployment", map[string]string{"app.yaml": api, "up.yaml": strings.Replace(upgrade, "%s", "", 1)}, nil,
			"upgrade job-system/up ended Failed: worker: deployment job-system/job-worker not found: create it or fix spec.worker.deploymentRef.name"},
		{"two containers without containerName", map[string]string{"app.yaml": twoContainers + "---\n" + api, "up.yaml": strings.Replace(upgrade, "%s", "", 1)}, nil,
			"worker: deployment job-system/job-worker has 2 containers (worker, sidecar): set spec.worker.containerName to one of them"},
		{"no upgrade", map[string]string{"app.yaml": api}, nil, "no ApplicationUpgrade in the manifests"},
		{"bad limit flag", map[string]string{"app.yaml": api}, []string{"--limit", "-3m"}, "must be a positive duration"},
		{"bad worker image never rolls", map[string]string{"app.yaml": worker + "---\n" + api,
			"up.yaml": strings.Replace(strings.Replace(upgrade, "%s", ", containerName: worker", 1), "job-worker:v2", "job-worker:does-not-exist", 1)}, nil,
			"ended Failed: worker: Rollout of job-system/job-worker failed: pod job-worker-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runWith(t, tc.files, tc.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			for _, noise := range []string{"strconv.", `in scheme "`, "stat .", " in .", "the run did not stop in time"} {
				assert.NotContains(t, err.Error(), noise)
			}
		})
	}
}

func TestSimulateWritesEventLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "e.jsonl")
	var out bytes.Buffer
	cmd := newCommand(&out)
	cmd.SetArgs([]string{"--events", path, "--quiet"})
	require.NoError(t, cmd.Execute())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"event":"DeploymentWrite","namespace":"job-system","name":"job-api"`)
	assert.True(t, strings.HasPrefix(out.String(), "OK: 1 upgrade(s) completed"), out.String())
}

// TestReplayHintKeepsTheFlagsThatChangeTheRun: the replay command printed
// on failure names the user's manifests and limit, not only the seed, and
// survives make and the shell: run through a Makefile with the project's
// recipe shape ($(ARGS) on a shell line), it gives back the same arguments.
func TestReplayHintKeepsTheFlagsThatChangeTheRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), `my "odd" $dir's`)
	require.NoError(t, os.Mkdir(dir, 0o755))
	bad := strings.Replace(strings.Replace(upgrade, "%s", ", containerName: worker", 1), "job-worker:v2", "job-worker:does-not-exist", 1)
	for name, body := range map[string]string{"app.yaml": worker + "---\n" + api, "up.yaml": bad} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	var out bytes.Buffer
	cmd := newCommand(&out)
	cmd.SetArgs([]string{"--manifests", dir, "--seed", "3", "--limit", "90m", "--quiet"})
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	require.Error(t, err)
	_, replay, ok := strings.Cut(err.Error(), "(replay: ")
	require.True(t, ok, err.Error())
	replay = strings.TrimSuffix(replay, ")")
	require.True(t, strings.HasPrefix(replay, "make simulate ARGS="), replay)

	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make to replay through")
	}
	mk := filepath.Join(t.TempDir(), "Makefile")
	require.NoError(t, os.WriteFile(mk, []byte("simulate:\n\t@printf '[%s]\\n' $(ARGS)\n"), 0o644))
	got, err := exec.Command("sh", "-c", strings.Replace(replay, "make simulate", "make -s -f "+mk+" simulate", 1)).CombinedOutput()
	require.NoError(t, err, string(got))
	assert.Equal(t, "[--manifests]\n["+dir+"]\n[--limit]\n[1h30m0s]\n[--seed]\n[3]\n", string(got))
}

// The documented exit codes: 2 bad input, 3 ordering violation, 4 not
// completed, 0 OK (1 is everything else).
func TestSimulateExitCodes(t *testing.T) {
	good := map[string]string{"app.yaml": worker + "---\n" + api, "up.yaml": strings.Replace(upgrade, "%s", ", containerName: worker", 1)}
	_, err := runWith(t, good)
	assert.Equal(t, exitOK, exitCode(err))
	_, err = runWith(t, good, "--seed", "abc")
	assert.Equal(t, exitBadInput, exitCode(err))
	_, err = runWith(t, good, "extra-arg")
	assert.Equal(t, exitBadInput, exitCode(err))
	_, err = runWith(t, map[string]string{"app.yaml": api})
	assert.Equal(t, exitBadInput, exitCode(err), "no upgrade")
	_, err = runWith(t, good, "--limit", "5s")
	assert.Equal(t, exitNotComplete, exitCode(err), "limit reached: %v", err)
	_, err = runWith(t, map[string]string{"app.yaml": api, "up.yaml": strings.Replace(upgrade, "%s", "", 1)})
	assert.Equal(t, exitNotComplete, exitCode(err), "Failed: %v", err)
	_, err = runWith(t, good, "-o", "yaml")
	assert.Equal(t, exitBadInput, exitCode(err))
	// a bad --faults spec or scenario, or a fault aimed at a component the
	// manifests lack, is bad input too, refused before the transcript
	for _, args := range [][]string{
		{"--faults", "frobnicate@3"}, {"--faults", "pause@8s:for=0s"}, {"--faults", "gitops-revert@0s:every=-1s"},
		{"--faults", "scale@5s:dep=nosuch"},
	} {
		out, err := runWith(t, good, args...)
		assert.Equal(t, exitBadInput, exitCode(err), "%v: %v", args, err)
		assert.NotContains(t, out, "schedule:", "%v: refused before the transcript", args)
	}
	// An ordering violation: a crafted report, as the mutants produce on a
	// real run (scenarios/faults/mutants; the product never violates).
	assert.Equal(t, exitViolation, exitCode(withCode(exitViolation, errors.New("x"))))
}

// The violation verdict is told apart from the not-completed one.
func TestVerdictCodes(t *testing.T) {
	res := &simrun.Result{Upgrades: []upgradesv1alpha1.ApplicationUpgrade{{}}, Reports: map[string]judge.Report{"/": {Violations: []string{"api written at 3s while worker pod p (v1) existed"}}}}
	res.Upgrades[0].Status.Phase = upgradesv1alpha1.PhaseCompleted
	assert.Equal(t, exitViolation, exitCode(verdictOf(res, options{})))
	res.Reports = map[string]judge.Report{"/": {}}
	res.Upgrades[0].Status.Phase = upgradesv1alpha1.PhaseFailed
	assert.Equal(t, exitNotComplete, exitCode(verdictOf(res, options{})))
	res.Upgrades[0].Status.Phase = upgradesv1alpha1.PhaseCompleted
	assert.NoError(t, verdictOf(res, options{}))
}

// A violation's verdict names the one judge's artifacts, written beside
// the event log; a run that only did not complete writes none.
func TestViolationWritesTheJudgesArtifacts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "seed-1")
	err := withArtifacts(withCode(exitViolation, errors.New("violation: porcupine: x")), &simrun.Result{}, dir, "replay: make simulate")
	assert.Equal(t, exitViolation, exitCode(err))
	assert.ErrorContains(t, err, "violation: porcupine: x\nartifacts: "+filepath.Join(dir, "porcupine.html")+" "+filepath.Join(dir, "timeline.svg"))
	for _, f := range []string{"porcupine.html", "timeline.svg", "events.jsonl", "ops.jsonl", "verdict.txt"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	other := filepath.Join(t.TempDir(), "seed-2")
	err = withArtifacts(withCode(exitNotComplete, errors.New("upgrade ended Failed")), &simrun.Result{}, other, "")
	assert.EqualError(t, err, "upgrade ended Failed")
	assert.NoDirExists(t, other)
	assert.Equal(t, filepath.Join("logs", "simulate-artifacts", "seed-4-demo"), artifactsDir(options{events: filepath.Join("logs", "run.jsonl")}, 4, "demo"))
}

// -o json parses, carries the verdict, the exit code and per-edge handoffs;
// manifests come from stdin with --manifests -.
func TestSimulateJSONFromStdin(t *testing.T) {
	var out bytes.Buffer
	cmd := newCommand(&out)
	cmd.SetArgs([]string{"--manifests", "-", "-o", "json"})
	stdinYAML := worker + "---\n" + api + "---\n" + strings.Replace(upgrade, "%s", ", containerName: worker", 1)
	setStdin(cmd, stdinYAML)
	require.NoError(t, cmd.Execute())
	var res jsonResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &res), out.String())
	assert.Equal(t, "ok", res.Verdict)
	assert.Equal(t, 0, res.ExitCode)
	require.Len(t, res.Upgrades, 1)
	assert.Equal(t, "Completed", res.Upgrades[0].Phase)
	require.Len(t, res.Upgrades[0].Edges, 1)
	e := res.Upgrades[0].Edges[0]
	assert.Equal(t, "worker", e.Dependency)
	require.NotNil(t, e.HandoffSeconds)
	assert.GreaterOrEqual(t, *e.HandoffSeconds, 0.0)
	assert.Empty(t, e.Violations)

	// Not completed: JSON still printed, the error carries exit code 4.
	out.Reset()
	cmd = newCommand(&out)
	cmd.SetArgs([]string{"--manifests", "-", "-o", "json", "--limit", "5s"})
	setStdin(cmd, stdinYAML)
	err := cmd.Execute()
	assert.Equal(t, exitNotComplete, exitCode(err))

	// Empty stdin is bad input.
	cmd = newCommand(&out)
	cmd.SetArgs([]string{"--manifests", "-"})
	setStdin(cmd, "")
	err = cmd.Execute()
	assert.Equal(t, exitBadInput, exitCode(err))
	assert.Contains(t, err.Error(), "stdin is empty")
}

// The graph demo's JSON has one entry per dependency edge.
func TestSimulateJSONGraphEdges(t *testing.T) {
	var out bytes.Buffer
	cmd := newCommand(&out)
	cmd.SetArgs([]string{"--manifests", "../../deploy/demo-graph", "-o", "json"})
	require.NoError(t, cmd.Execute())
	var res jsonResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &res))
	require.Len(t, res.Upgrades, 1)
	assert.Len(t, res.Upgrades[0].Edges, 4)
}

func setStdin(cmd interface{ SetIn(io.Reader) }, s string) { cmd.SetIn(strings.NewReader(s)) }
