package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
)

// maxListed is how many failing seeds the summary lists.
const maxListed = 10

// runSeeds runs --seeds schedules (with --shard, only its slice of them).
// As text it prints the summary table and, when any run failed, the
// failing seeds and the shrunk replay command of the first; with -o json
// or --shard it prints the sweepResult instead. A shard exits 0 once its
// result is written (merge gives the verdict); the unsharded run exits
// with the verdict's code.
func runSeeds(ctx context.Context, o options, scenarioSet bool, stdout, stderr io.Writer) error {
	from := int64(1)
	if o.seedSet {
		from = o.seed
	}
	seeds := seedRange{From: from, Count: o.seeds}
	shard := shardRange{Index: 0, Of: 1, seedRange: seeds}
	if o.shard.set {
		shard = shardRange{Index: o.shard.index, Of: o.shard.count, seedRange: seeds.slice(o.shard.index, o.shard.count)}
	}
	cfg := faults.BatchConfig{From: shard.From, N: shard.Count, Workers: o.workers}
	over := fmt.Sprintf("%d built-in scenarios", len(faults.ScenarioNames()))
	switch {
	case o.manifestsDir != "":
		objs, err := loadManifests(o)
		if err != nil {
			return err
		}
		cfg.Objects, over = objs, "the manifests of "+o.manifestsDir
	case scenarioSet:
		if _, err := faults.LookupScenario(o.scenario); err != nil {
			return err
		}
		cfg.Scenarios, over = []string{o.scenario}, "scenario "+o.scenario
	}
	bar := newBar(o, stderr, shard.Count, "seeds")
	cfg.Done = func(faults.Summary) { _ = bar.Add(1) }
	start := time.Now()
	sums := faults.RunBatch(ctx, cfg)
	wall := time.Since(start)
	_ = bar.Finish()
	if o.progress {
		fmt.Fprintln(stderr)
	}
	if err := ctx.Err(); err != nil {
		st := faults.Aggregate(sums)
		printSummary(stdout, st, wall, "", fmt.Sprintf("%s over %s", seeds, over))
		return fmt.Errorf("interrupted after %d runs: %w", len(sums), err)
	}
	res := newResult(seeds, shard, over, runFlags(o), sums, wall)
	for _, s := range sums {
		if !s.Failed() {
			continue
		}
		if !o.noShrink && len(s.Schedule.Faults) > 0 {
			small, runs := shrinkSchedule(ctx, s.Schedule, cfg.Objects, o, s.FailureClass())
			res.Shrunk = &shrunkRecord{Seed: s.Schedule.Seed, From: len(s.Schedule.Faults), To: len(small.Faults), Runs: runs,
				Faults: small.Spec(), Replay: small.Command(runFlags(o)...)}
		}
		break
	}
	verr := sweepVerdict(res)
	res.setVerdict(verr)
	switch {
	case o.shard.set:
		return writeResult(stdout, res)
	case o.output == "json":
		if err := writeResult(stdout, res); err != nil {
			return err
		}
		return verr
	}
	err := printSweep(stdout, res, "")
	if err != nil {
		// the failing seeds' artifacts (replayed: a batch keeps no event log)
		if len(sums) > 0 {
			fmt.Fprintln(stderr)
		}
		n := 0
		for _, s := range sums {
			if !s.Failed() || s.Err != nil || n == maxListed {
				continue
			}
			n++
			line, aerr := replayArtifacts(ctx, o, s.Schedule, cfg.Objects, s.Schedule.Command(runFlags(o)...))
			if aerr != nil {
				return errors.Join(err, aerr)
			}
			// on stderr: stdout stays the summary simulate merge reproduces
			fmt.Fprintf(stderr, "seed %d %s\n", s.Schedule.Seed, line)
		}
	}
	return err
}

// sweepVerdict is the verdict of res's runs: nil, or exitViolation naming
// how many broke a property and the command that replays the first (its
// shrunk schedule when res has one).
func sweepVerdict(res *sweepResult) error {
	if len(res.Failures) == 0 {
		return nil
	}
	worst := res.Failures[0]
	cmd := worst.Replay
	if res.Shrunk != nil && res.Shrunk.Seed == worst.Seed {
		cmd = res.Shrunk.Replay
	}
	return withCode(exitViolation, fmt.Errorf("%d of %d runs broke a property; seed %d (%s) replays with: %s", len(res.Failures), len(res.Runs),
		worst.Seed, worst.Class, cmd))
}

// printSweep prints the summary of res (one run's, or a merge of shards:
// wallNote then says how its wall time was added up) and returns its
// verdict: the one function behind both, so their output is the same.
func printSweep(w io.Writer, res *sweepResult, wallNote string) error {
	sums := make([]faults.Summary, 0, len(res.Runs))
	for _, r := range res.Runs {
		s, err := r.summary()
		if err != nil {
			return withCode(exitBadInput, err)
		}
		sums = append(sums, s)
	}
	st := faults.Aggregate(sums)
	printSummary(w, st, time.Duration(res.WallSeconds*float64(time.Second)), wallNote, fmt.Sprintf("%s over %s", res.Seeds, res.Over))
	if n := len(res.Failures); n > 0 {
		fmt.Fprintf(w, "\nfailing runs (first %d of %d):\n", min(maxListed, n), n)
		for _, f := range res.Failures[:min(maxListed, n)] {
			s, _ := runByseed(res, f.Seed).summary()
			fmt.Fprintf(w, "  %s\n    %s\n    replay: %s\n", s.Schedule, f.First, f.Replay)
		}
	}
	if s := res.Shrunk; s != nil {
		fmt.Fprintf(w, "\nseed %d shrunk from %d to %d fault(s) in %d runs: %s\n", s.Seed, s.From, s.To, s.Runs, s.Faults)
	}
	return sweepVerdict(res)
}

func runByseed(res *sweepResult, seed int64) runRecord {
	i := sort.Search(len(res.Runs), func(i int) bool { return res.Runs[i].Seed >= seed })
	if i < len(res.Runs) && res.Runs[i].Seed == seed {
		return res.Runs[i]
	}
	return runRecord{Seed: seed}
}

func newBar(o options, w io.Writer, n int, unit string) *progressbar.ProgressBar {
	return progressbar.NewOptions(n, progressbar.OptionSetWriter(w), progressbar.OptionSetVisibility(o.progress),
		progressbar.OptionSetDescription("simulating"), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit), progressbar.OptionThrottle(250*time.Millisecond), progressbar.OptionSetWidth(30),
		progressbar.OptionSetPredictTime(true))
}

// printSummary writes the batch's table; wallNote, when set, follows the
// wall time in parentheses.
func printSummary(w io.Writer, st faults.Stats, wall time.Duration, wallNote, what string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "runs\t%d\t(%s)\n", st.Runs, what)
	fmt.Fprintf(tw, "completed\t%d\n", st.Completed)
	fmt.Fprintf(tw, "failed as expected\t%d\t(bad, crash-looping or never-ready image)\n", st.FailedAsExpected)
	fmt.Fprintf(tw, "deleted as expected\t%d\t(upgrade deleted, nothing written after)\n", st.DeletedAsExpected)
	fmt.Fprintf(tw, "virtual p50 / p99\t%s / %s\n", st.P50.Round(100*time.Millisecond), st.P99.Round(100*time.Millisecond))
	if wallNote != "" {
		wallNote = "\t(" + wallNote + ")"
	}
	fmt.Fprintf(tw, "wall time\t%s%s\n", wall.Round(10*time.Millisecond), wallNote)
	if s := wall.Seconds(); s > 0 {
		fmt.Fprintf(tw, "runs/s\t%.1f\n", float64(st.Runs)/s)
		fmt.Fprintf(tw, "virtual:wall\t%.0f:1\n", st.Total.Seconds()/s)
	}
	fmt.Fprintf(tw, "operator API calls\t%d\n", st.Calls)
	_ = tw.Flush()
	kinds := make([]string, 0, len(st.ByKind))
	for k, n := range st.ByKind {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	fmt.Fprintf(w, "runs with each fault: %s\n", strings.Join(kinds, ", "))
	scenarios := make([]string, 0, len(st.ByScenario))
	for name, sc := range st.ByScenario {
		scenarios = append(scenarios, fmt.Sprintf("%s %d (%d violations)", name, sc.Runs, sc.Violations))
	}
	sort.Strings(scenarios)
	fmt.Fprintf(w, "runs per scenario: %s\n", strings.Join(scenarios, ", "))
	fmt.Fprintf(w, "violations: %d\n", st.Violations)
}
