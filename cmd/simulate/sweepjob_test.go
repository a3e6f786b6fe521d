package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

// The Job of deploy/sweep, run as its pods would run it (command and
// args, $(JOB_COMPLETION_INDEX) expanded to each completion index), on
// fewer seeds: its shards merge into the summary of the unsharded run.
// The Job's shard count must be its completions, or seeds go missing.
func TestSweepJobShardsMergeToTheUnshardedRun(t *testing.T) {
	data, err := os.ReadFile("../../deploy/sweep/job.yaml")
	require.NoError(t, err)
	var job batchv1.Job
	require.NoError(t, yaml.UnmarshalStrict(data, &job))
	require.NotNil(t, job.Spec.CompletionMode)
	assert.Equal(t, batchv1.IndexedCompletion, *job.Spec.CompletionMode)
	completions := int(*job.Spec.Completions)
	assert.LessOrEqual(t, int(*job.Spec.Parallelism), completions)
	c := job.Spec.Template.Spec.Containers[0]
	assert.Equal(t, []string{"/simulate"}, c.Command, "the image's simulate (Dockerfile)")
	assert.Contains(t, c.Args, fmt.Sprintf("--shard=$(JOB_COMPLETION_INDEX)/%d", completions), "one shard per completion index")

	const seeds = "--seeds=20"
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		if strings.HasPrefix(a, "--seeds=") {
			a = seeds
		}
		args[i] = a
	}
	dir := t.TempDir()
	var files []string
	for i := range completions {
		pod := strings.Split(strings.ReplaceAll(strings.Join(args, "\x00"), "$(JOB_COMPLETION_INDEX)", fmt.Sprint(i)), "\x00")
		out, err := simulate(t, pod...)
		require.NoError(t, err, "shard %d", i)
		files = append(files, filepath.Join(dir, fmt.Sprintf("shard-%d.json", i)))
		require.NoError(t, os.WriteFile(files[i], []byte(out), 0o644))
	}
	merged, err := simulate(t, append([]string{"merge"}, files...)...)
	require.NoError(t, err, merged)
	whole, err := simulate(t, seeds, "--progress=false")
	require.NoError(t, err, whole)
	assert.Equal(t, untimed(whole), untimed(merged))
}
