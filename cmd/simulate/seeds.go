package main

import (
	"context"
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

// runSeeds runs --seeds schedules, prints the summary table and, when any
// run failed, the failing seeds and the shrunk replay command of the first.
func runSeeds(ctx context.Context, o options, scenarioSet bool, stdout, stderr io.Writer) error {
	from := int64(1)
	if o.seedSet {
		from = o.seed
	}
	cfg := faults.BatchConfig{From: from, N: o.seeds, Workers: o.workers}
	what := fmt.Sprintf("%d built-in scenarios", len(faults.ScenarioNames()))
	switch {
	case o.manifestsDir != "":
		objs, err := loadManifests(o)
		if err != nil {
			return err
		}
		cfg.Objects, what = objs, "the manifests of "+o.manifestsDir
	case scenarioSet:
		if _, err := faults.LookupScenario(o.scenario); err != nil {
			return err
		}
		cfg.Scenarios, what = []string{o.scenario}, "scenario "+o.scenario
	}
	bar := newBar(o, stderr, o.seeds, "seeds")
	cfg.Done = func(faults.Summary) { _ = bar.Add(1) }
	start := time.Now()
	sums := faults.RunBatch(ctx, cfg)
	wall := time.Since(start)
	_ = bar.Finish()
	fmt.Fprintln(stderr)
	st := faults.Aggregate(sums)
	printSummary(stdout, st, wall, fmt.Sprintf("seeds %d–%d over %s", from, from+int64(o.seeds)-1, what))
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("interrupted after %d runs: %w", len(sums), err)
	}
	var failing []faults.Summary
	for _, s := range sums {
		if s.Failed() {
			failing = append(failing, s)
		}
	}
	if len(failing) == 0 {
		return nil
	}
	fmt.Fprintf(stdout, "\nfailing runs (first %d of %d):\n", min(maxListed, len(failing)), len(failing))
	for _, s := range failing[:min(maxListed, len(failing))] {
		first := "error: " + fmt.Sprint(s.Err)
		if len(s.Violations) > 0 {
			first = s.Violations[0]
		}
		fmt.Fprintf(stdout, "  %s\n    %s\n    replay: %s\n", s.Schedule, first, s.Schedule.Command(runFlags(o)...))
	}
	worst := failing[0]
	cmd := worst.Schedule.Command(runFlags(o)...)
	if !o.noShrink && len(worst.Schedule.Faults) > 0 {
		small, runs := shrinkSchedule(ctx, worst.Schedule, cfg.Objects, o, worst.FailureClass())
		fmt.Fprintf(stdout, "\nseed %d shrunk from %d to %d fault(s) in %d runs: %s\n", worst.Schedule.Seed,
			len(worst.Schedule.Faults), len(small.Faults), runs, small.Spec())
		cmd = small.Command(runFlags(o)...)
	}
	return withCode(exitViolation, fmt.Errorf("%d of %d runs broke a property; seed %d (%s) replays with: %s", len(failing), len(sums),
		worst.Schedule.Seed, worst.FailureClass(), cmd))
}

func newBar(o options, w io.Writer, n int, unit string) *progressbar.ProgressBar {
	return progressbar.NewOptions(n, progressbar.OptionSetWriter(w), progressbar.OptionSetVisibility(o.progress),
		progressbar.OptionSetDescription("simulating"), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit), progressbar.OptionThrottle(250*time.Millisecond), progressbar.OptionSetWidth(30),
		progressbar.OptionSetPredictTime(true))
}

// printSummary writes the batch's table.
func printSummary(w io.Writer, st faults.Stats, wall time.Duration, what string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "runs\t%d\t(%s)\n", st.Runs, what)
	fmt.Fprintf(tw, "completed\t%d\n", st.Completed)
	fmt.Fprintf(tw, "failed as expected\t%d\t(bad, crash-looping or never-ready image)\n", st.FailedAsExpected)
	fmt.Fprintf(tw, "deleted as expected\t%d\t(upgrade deleted, nothing written after)\n", st.DeletedAsExpected)
	fmt.Fprintf(tw, "virtual p50 / p99\t%s / %s\n", st.P50.Round(100*time.Millisecond), st.P99.Round(100*time.Millisecond))
	fmt.Fprintf(tw, "wall time\t%s\n", wall.Round(10*time.Millisecond))
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
	fmt.Fprintf(w, "violations: %d\n", st.Violations)
}
