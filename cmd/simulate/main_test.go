package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			`x.yaml: document 1: no kind "Widget" is registered for version "example.com/v1"`},
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
