package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/faults/sweep"
)

// runSweep is --crash-sweep: every built-in scenario (or --manifests, or
// the --scenario given), the operator killed after each of its API calls.
func runSweep(ctx context.Context, o options, scenarioSet bool, stdout, stderr io.Writer) error {
	type target struct {
		name string
		objs []clientObject
	}
	var targets []target
	switch {
	case o.manifestsDir != "":
		objs, err := loadManifests(o)
		if err != nil {
			return err
		}
		targets = []target{{"manifests", objs}}
	case scenarioSet:
		if _, err := faults.LookupScenario(o.scenario); err != nil {
			return err
		}
		targets = []target{{name: o.scenario}}
	default:
		for _, s := range faults.Scenarios() {
			targets = append(targets, target{name: s.Name})
		}
	}
	start := time.Now()
	runs, failed := 0, 0
	var first *sweep.Failure
	for _, t := range targets {
		var bar *progressbar.ProgressBar
		rep, err := sweep.Run(ctx, sweep.Config{Scenario: t.name, Objects: t.objs, Seed: o.seed, Workers: o.workers,
			Started: func(n int) { bar = newBar(o, stderr, n, "crash points") },
			Done:    func() { _ = bar.Add(1) }})
		if bar != nil {
			_ = bar.Finish()
			fmt.Fprintln(stderr)
		}
		if err != nil {
			return fmt.Errorf("crash sweep of %s: %w", t.name, err)
		}
		fmt.Fprintln(stdout, rep)
		runs += rep.Runs
		failed += len(rep.Failures)
		for i, f := range rep.Failures {
			if i < 3 {
				cmd := f.Schedule.Command(runFlags(o)...)
				line, err := replayArtifacts(ctx, o, f.Schedule, t.objs, cmd)
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "    %s\n    replay: %s\n    %s\n", f.Violations[0], cmd, line)
			}
			if first == nil {
				first = &rep.Failures[i]
			}
		}
	}
	wall := time.Since(start)
	fmt.Fprintf(stdout, "crash sweep: %d runs, %d failed, wall time %s (%.1f runs/s)\n", runs, failed, wall.Round(10*time.Millisecond), float64(runs)/wall.Seconds())
	if first != nil {
		return withCode(exitViolation, fmt.Errorf("%d crash points broke a property; first replays with: %s", failed, first.Schedule.Command(runFlags(o)...)))
	}
	return nil
}
