package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
)

// schedule builds the one schedule of --seed/--scenario/--faults, with
// the objects of --manifests (nil: the built-in scenario's).
func schedule(o options, scenarioSet bool) (faults.Schedule, []clientObject, error) {
	s := faults.Schedule{Seed: o.seed, Scenario: o.scenario}
	var objs []clientObject
	names := faults.ScenarioNames()
	if scenarioSet {
		names = []string{o.scenario}
	}
	if o.manifestsDir != "" {
		var err error
		if objs, err = loadManifests(o); err != nil {
			return s, nil, err
		}
		s.Scenario, names = "manifests", []string{"manifests"}
	} else if _, err := faults.LookupScenario(o.scenario); err != nil {
		return s, nil, withCode(exitBadInput, err)
	}
	if o.faults == "random" {
		return faults.GenerateFor(o.seed, names, objs), objs, nil
	}
	fs, err := faults.ParseFaults(o.faults)
	if err != nil {
		return s, nil, withCode(exitBadInput, fmt.Errorf("--faults: %w", err))
	}
	s.Faults = fs
	// a fault aimed at a component the manifests do not have, or cannot
	// act on, is bad input: refused before the transcript starts
	aimed := objs
	if aimed == nil {
		sc, _ := faults.LookupScenario(s.Scenario)
		if aimed, err = sc.Objects(); err != nil {
			return s, nil, err
		}
	}
	if err := faults.RefuseTargets(aimed, fs); err != nil {
		return s, nil, withCode(exitBadInput, err)
	}
	return s, objs, nil
}

// runFaults runs one schedule, prints its transcript (with a line per
// fault) and verdict, and on failure the shrunk replay command.
func runFaults(ctx context.Context, o options, scenarioSet bool, stdout io.Writer) error {
	s, objs, err := schedule(o, scenarioSet)
	if err != nil {
		return err
	}
	cfg := faults.RunConfig{Schedule: s, Objects: objs, Limit: o.limit.d}
	if !o.quiet {
		cfg.Transcript = stdout
		fmt.Fprintf(stdout, "schedule: %s\n\n", s)
	}
	if o.events != "" {
		f, err := os.Create(o.events)
		if err != nil {
			return fmt.Errorf("create event log: %w", err)
		}
		defer f.Close()
		cfg.EventLog = f
	}
	out := faults.Run(ctx, cfg)
	if out.Err != nil {
		return fmt.Errorf("%s: %w", s, out.Err)
	}
	if o.timeline != "" {
		if err := writeTimeline(o.timeline, s.Command(runFlags(o)...), out.Result, out.Fired, out.Start); err != nil {
			return err
		}
	}
	if !out.Failed() {
		fmt.Fprintf(stdout, "OK: %s: %s as expected, no violation (%s virtual, %d operator API calls)\n",
			s, out.ExpectedState(), out.Result.Elapsed, out.Calls)
		return nil
	}
	fmt.Fprintf(stdout, "FAILED: %s: %d violation(s):\n", s, len(out.Violations))
	for _, v := range out.Violations {
		fmt.Fprintf(stdout, "  - %s\n", v)
	}
	cmd := s.Command(runFlags(o)...)
	if out.Result != nil {
		line, err := writeArtifacts(artifactsDir(o, s.Seed, s.Scenario), out.Result, "replay: "+cmd+"\n"+strings.Join(out.Violations, "\n"))
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, line)
	}
	if !o.noShrink && len(s.Faults) > 0 {
		small, runs := shrinkSchedule(ctx, s, objs, o, out.FailureClass())
		fmt.Fprintf(stdout, "shrunk from %d to %d fault(s) in %d runs\n", len(s.Faults), len(small.Faults), runs)
		cmd = small.Command(runFlags(o)...)
	}
	return withCode(exitViolation, fmt.Errorf("%s (replay: %s)", out.FailureClass(), cmd))
}

// shrinkSchedule drops faults (and lowers their parameters) while the run
// still fails with the same class.
func shrinkSchedule(ctx context.Context, s faults.Schedule, objs []clientObject, o options, class string) (faults.Schedule, int) {
	r := faults.Shrink(s, func(c faults.Schedule) bool {
		return faults.Run(ctx, faults.RunConfig{Schedule: c, Objects: objs, Limit: o.limit.d}).FailureClass() == class
	})
	return r.Schedule, r.Runs
}
