package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shards runs `simulate args... --shard i/n` for every i and returns the
// result files.
func shards(t *testing.T, n int, args ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i := range n {
		out, err := simulate(t, append(args, "--shard", fmt.Sprintf("%d/%d", i, n))...)
		require.NoError(t, err, "a shard exits 0 once its result is written, whatever its verdict")
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		require.NoError(t, os.WriteFile(f, []byte(out), 0o644))
		files = append(files, f)
	}
	return files
}

// timing matches the summary lines that measure this process, not the runs.
var timing = regexp.MustCompile(`(?m)^(wall time|runs/s|virtual:wall) .*\n`)

// artifactLines are the stderr lines (and the blank line before them)
// naming the failing seeds' artifacts.
var artifactLines = regexp.MustCompile(`\n(seed \d+ artifacts: [^\n]*\n)+`)

func untimed(s string) string { return timing.ReplaceAllString(s, "") }

// The union of n shards, merged, prints what the unsharded run prints
// (but for its wall time) and exits the same way, for several n.
func TestMergedShardsEqualTheUnshardedRun(t *testing.T) {
	args := []string{"--seeds", "9", "--seed", "30", "--progress=false"}
	whole, wholeErr := simulate(t, args...)
	require.NoError(t, wholeErr, whole)
	require.Contains(t, whole, "(seeds 30–38 over 9 built-in scenarios)")
	for _, n := range []int{1, 2, 4, 12} {
		files := shards(t, n, args...)
		merged, err := simulate(t, append([]string{"merge"}, files...)...)
		require.NoError(t, err, merged)
		assert.Equal(t, untimed(whole), untimed(merged), "merge of %d shards", n)
		assert.Contains(t, merged, fmt.Sprintf("(the %d shards' wall times added up)", n))
	}
}

// A sweep where every run breaks a property (the API Deployment is
// missing): the merge lists the same failures, the same shrunk first
// failure and fails with the same line and exit code as the whole run.
func TestMergedFailingShardsEqualTheUnshardedRun(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the failing seeds' artifacts go there
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(worker), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "up.yaml"), []byte(strings.Replace(upgrade, "%s", ", containerName: worker", 1)), 0o644))
	args := []string{"--manifests", dir, "--seeds", "5", "--seed", "3", "--progress=false"}
	whole, wholeErr := simulate(t, args...)
	require.Error(t, wholeErr)
	assert.Equal(t, exitViolation, exitCode(wholeErr))
	assert.Contains(t, whole, "failing runs (first 5 of 5)")
	assert.Contains(t, whole, "shrunk from")
	// the unsharded run replays its failing seeds for their artifacts
	// (on stderr, which simulate() mixes in; a merge has no runs to replay)
	for seed := 3; seed <= 7; seed++ {
		d := filepath.Join(tmp, "simulate-artifacts", fmt.Sprintf("seed-%d-manifests", seed))
		assert.Contains(t, whole, fmt.Sprintf("seed %d artifacts: %s", seed, filepath.Join(d, "porcupine.html")))
		assert.FileExists(t, filepath.Join(d, "timeline.svg"))
		assert.FileExists(t, filepath.Join(d, "events.jsonl"))
	}
	whole = artifactLines.ReplaceAllString(whole, "")

	files := shards(t, 3, args...)
	merged, err := simulate(t, append([]string{"merge"}, files...)...)
	require.Error(t, err)
	assert.Equal(t, wholeErr.Error(), err.Error())
	assert.Equal(t, exitViolation, exitCode(err))
	assert.Equal(t, untimed(whole), untimed(merged))

	// Each shard's result names its failures and their replay commands.
	var r sweepResult
	data, err := os.ReadFile(files[1])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &r))
	assert.Equal(t, shardRange{Index: 1, Of: 3, seedRange: seedRange{From: 4, Count: 2}}, r.Shard)
	require.Len(t, r.Failures, 2)
	assert.Equal(t, "unexpected terminal state", r.Failures[0].Class)
	assert.Contains(t, r.Failures[0].Replay, `make simulate ARGS="--manifests `+dir+` --seed 4 --faults `)
	assert.Equal(t, "property-broken", r.Verdict)
	assert.Equal(t, exitViolation, r.ExitCode)

	// -o json of the whole run and of the merge: the same result.
	wholeJSON, err := simulate(t, append(args, "-o", "json")...)
	assert.Equal(t, exitViolation, exitCode(err))
	mergedJSON, err := simulate(t, append([]string{"merge", "-o", "json"}, files...)...)
	assert.Equal(t, exitViolation, exitCode(err))
	var a, b sweepResult
	require.NoError(t, json.Unmarshal([]byte(wholeJSON), &a))
	require.NoError(t, json.Unmarshal([]byte(mergedJSON), &b))
	a.WallSeconds, b.WallSeconds = 0, 0
	assert.Equal(t, a, b)
}

func TestMergeRefusesWhatIsNotOneWholeSweep(t *testing.T) {
	files := shards(t, 4, "--seeds", "8", "--seed", "50", "--scenario", "single", "--progress=false")
	halves := shards(t, 2, "--seeds", "8", "--seed", "50", "--scenario", "single", "--progress=false")
	other := shards(t, 2, "--seeds", "8", "--seed", "50", "--progress=false")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	good, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var r sweepResult
	require.NoError(t, json.Unmarshal(good, &r))
	r.Runs = r.Runs[:1]
	truncated, err := json.Marshal(r)
	require.NoError(t, err)

	for name, tc := range map[string]struct {
		files []string
		want  string
	}{
		"missing":       {[]string{files[0], files[1], files[3]}, "shards missing: seeds 54–55 of seeds 50–57 are in none of the files"},
		"missing end":   {files[:3], "shards missing: seeds 56–57 of seeds 50–57 are in none of the files"},
		"twice":         {[]string{files[0], files[1], files[1], files[2], files[3]}, "shards overlap: " + files[1] + " (seeds 52–53) and " + files[1] + " (seeds 52–53)"},
		"other sweep":   {[]string{other[0], files[1], files[2], files[3]}, "are not shards of one sweep: runs over 9 built-in scenarios, scenario single"},
		"overlap":       {[]string{files[0], halves[0], halves[1]}, "shards overlap: " + files[0] + " (seeds 50–51) and " + halves[0] + " (seeds 50–53)"},
		"no such file":  {[]string{files[0], filepath.Join(dir, "nope.json")}, "nope.json: no such file or directory"},
		"not a result":  {[]string{write("log.txt", "runs 4\n")}, "log.txt: not a sweep result"},
		"two values":    {[]string{write("two.json", string(good)+string(good))}, "two.json: more than one JSON value"},
		"truncated":     {[]string{write("short.json", string(truncated))}, "short.json: shard covers seeds 50–51 but holds 1 runs: the file is incomplete"},
		"other schema":  {[]string{write("v9.json", strings.Replace(string(good), sweepSchema, "x/v9", 1))}, `v9.json: schema "x/v9"`},
		"unknown field": {[]string{write("extra.json", strings.Replace(string(good), `"over"`, `"colour": 1, "over"`, 1))}, `unknown field "colour"`},
		"no files":      {nil, "merge needs the result files of the shards"},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := simulate(t, append([]string{"merge"}, tc.files...)...)
			require.Error(t, err, out)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
			assert.Equal(t, exitBadInput, exitCode(err))
			assert.NotContains(t, out, "runs ", "nothing half-printed")
		})
	}
	// Shards of one sweep cut two ways merge, as long as each seed is in one file.
	_, err = simulate(t, "merge", halves[0], files[2], files[3])
	require.NoError(t, err)
}

func TestShardFlagRefusals(t *testing.T) {
	for args, want := range map[string]string{
		"--seeds 4 --shard 4/4":               `want i/n with 0 ≤ i < n`,
		"--seeds 4 --shard 1":                 `want i/n with 0 ≤ i < n`,
		"--seeds 4 --shard -1/3":              `want i/n with 0 ≤ i < n`,
		"--seeds 4 --shard 0/0":               `want i/n with 0 ≤ i < n`,
		"--shard 0/2":                         "--shard 0/2 needs --seeds N",
		"--seeds 4 --shard 0/2 -o text":       "--shard prints a JSON result for simulate merge: drop -o text",
		"--crash-sweep --seeds 2 --shard 0/2": "--shard works with --seeds only",
		"--crash-sweep -o json":               "-o json describes one run, one --faults run or a --seeds sweep: drop --crash-sweep",
	} {
		_, err := simulate(t, strings.Fields(args)...)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), want, args)
		assert.NotContains(t, err.Error(), "\n", args)
		assert.Equal(t, exitBadInput, exitCode(err), args)
	}
}

// Shard i of n: contiguous, disjoint, together every seed exactly once,
// sizes within one of each other.
func TestSeedSlicesPartitionTheRange(t *testing.T) {
	for count := range 40 {
		for n := 1; n <= 12; n++ {
			r := seedRange{From: 7, Count: count}
			next, lo, hi := r.From, count, 0
			for i := range n {
				s := r.slice(i, n)
				require.Equal(t, next, s.From, "count %d, shard %d/%d", count, i, n)
				next += int64(s.Count)
				lo, hi = min(lo, s.Count), max(hi, s.Count)
			}
			require.Equal(t, r.last()+1, next)
			require.LessOrEqual(t, hi-lo, 1)
		}
	}
}

// A shard's stdout is its JSON result and nothing else: kubectl logs of
// the Job's pod is the file merge reads.
func TestShardStdoutIsOnlyTheResult(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cmd := newCommand(&stdout)
	cmd.SetArgs([]string{"--seeds", "3", "--shard", "2/3", "--progress=false"})
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	require.NoError(t, cmd.Execute())
	assert.Empty(t, stderr.String())
	var r sweepResult
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&r))
	assert.False(t, dec.More())
	assert.Equal(t, sweepSchema, r.Schema)
	assert.Equal(t, seedRange{From: 3, Count: 1}, r.Shard.seedRange)
	assert.Equal(t, seedRange{From: 1, Count: 3}, r.Seeds)
}
