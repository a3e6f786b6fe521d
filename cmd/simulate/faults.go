package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
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
// fault) and verdict, and on failure the shrunk replay command; with
// -o json, one JSON object instead (faultsJSON).
func runFaults(ctx context.Context, o options, scenarioSet bool, stdout io.Writer) error {
	s, objs, err := schedule(o, scenarioSet)
	if err != nil {
		return err
	}
	asJSON := o.output == "json"
	cfg := faults.RunConfig{Schedule: s, Objects: objs, Limit: o.limit.d}
	if !o.quiet && !asJSON {
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
	res := faultsJSON{Schedule: s.String(), Seed: s.Seed, Scenario: s.Scenario, Expected: out.ExpectedState(),
		Calls: out.Calls, Violations: out.Violations, Fired: firedJSON(out), Replay: s.Command(runFlags(o)...)}
	if res.Violations == nil {
		res.Violations = []string{}
	}
	if out.Result != nil {
		res.ElapsedSeconds = out.Result.Elapsed.Seconds()
	}
	if !out.Failed() {
		if asJSON {
			res.Verdict = verdictNames[exitOK]
			return encodeJSON(stdout, res)
		}
		fmt.Fprintf(stdout, "OK: %s: %s as expected, no violation (%s virtual, %d operator API calls)\n",
			s, out.ExpectedState(), out.Result.Elapsed, out.Calls)
		return nil
	}
	if !asJSON {
		fmt.Fprintf(stdout, "FAILED: %s: %d violation(s):\n", s, len(out.Violations))
		for _, v := range out.Violations {
			fmt.Fprintf(stdout, "  - %s\n", v)
		}
	}
	cmd := s.Command(runFlags(o)...)
	if out.Result != nil {
		dir := artifactsDir(o, s.Seed, s.Scenario)
		line, err := writeArtifacts(dir, out.Result, "replay: "+cmd+"\n"+strings.Join(out.Violations, "\n"))
		if err != nil {
			return err
		}
		res.Artifacts = judge.ArtifactPaths(dir)
		if !asJSON {
			fmt.Fprintln(stdout, line)
		}
	}
	if !o.noShrink && len(s.Faults) > 0 {
		small, runs := shrinkSchedule(ctx, s, objs, o, out.FailureClass())
		if !asJSON {
			fmt.Fprintf(stdout, "shrunk from %d to %d fault(s) in %d runs\n", len(s.Faults), len(small.Faults), runs)
		}
		cmd = small.Command(runFlags(o)...)
		res.Shrunk = cmd
	}
	err = withCode(exitViolation, fmt.Errorf("%s (replay: %s)", out.FailureClass(), cmd))
	if asJSON {
		res.Verdict, res.ExitCode, res.Error = "violation", exitViolation, err.Error()
		if jerr := encodeJSON(stdout, res); jerr != nil {
			return jerr
		}
	}
	return err
}

// faultsJSON is `-o json` of one --faults run: the verdict ("ok" or
// "violation", with its exit code), the schedule, what each upgrade was
// expected to end as, the operator's API calls, the faults as they
// fired (virtual seconds since the upgrades were created) and, on a
// violation, each broken property, the artifacts written and the shrunk
// schedule's replay command.
type faultsJSON struct {
	Verdict        string      `json:"verdict"`
	ExitCode       int         `json:"exitCode"`
	Error          string      `json:"error,omitempty"`
	Schedule       string      `json:"schedule"`
	Seed           int64       `json:"seed"`
	Scenario       string      `json:"scenario"`
	Expected       string      `json:"expected"` // Completed, Failed, … or mixed
	ElapsedSeconds float64     `json:"elapsedSeconds"`
	Calls          int         `json:"operatorAPICalls"`
	Fired          []firedItem `json:"fired"`
	Violations     []string    `json:"violations"`
	Artifacts      []string    `json:"artifacts,omitempty"`
	Replay         string      `json:"replay"`
	Shrunk         string      `json:"shrunk,omitempty"`
}

// firedItem is one fault (or fault model event) as it fired.
type firedItem struct {
	Fault        string  `json:"fault,omitempty"` // empty for a model's event (a leader's exit)
	StartSeconds float64 `json:"startSeconds"`
	EndSeconds   float64 `json:"endSeconds"`
	Note         string  `json:"note"`
}

func firedJSON(out *faults.Outcome) []firedItem {
	items := make([]firedItem, 0, len(out.Fired))
	for _, f := range out.Fired {
		it := firedItem{StartSeconds: (f.Start - out.Start).Seconds(), EndSeconds: (f.End - out.Start).Seconds(), Note: f.Note}
		if f.Fault.Kind != "" {
			it.Fault = f.Fault.String()
		}
		items = append(items, it)
	}
	return items
}

// shrinkSchedule drops faults (and lowers their parameters) while the run
// still fails with the same class.
func shrinkSchedule(ctx context.Context, s faults.Schedule, objs []clientObject, o options, class string) (faults.Schedule, int) {
	r := faults.Shrink(s, func(c faults.Schedule) bool {
		return faults.Run(ctx, faults.RunConfig{Schedule: c, Objects: objs, Limit: o.limit.d}).FailureClass() == class
	})
	return r.Schedule, r.Runs
}
