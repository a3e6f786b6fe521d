package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
)

// sweepSchema names the JSON of a --seeds sweep (docs/sweeps.md). A
// change to its fields that merge cannot read as before gets a new name.
const sweepSchema = "simulate.lunadas.dev/sweep/v1"

// sweepResult is the JSON result of `simulate --seeds N [--shard i/n]`
// (-o json, or always with --shard): what `simulate merge` needs to print
// the summary and exit code of the unsharded run. Seeds is the whole
// sweep; Shard the slice of it this result covers; Runs one record per
// seed of that slice, in seed order. Schema: docs/sweeps.md.
type sweepResult struct {
	Schema string     `json:"schema"`
	Seeds  seedRange  `json:"seeds"`
	Shard  shardRange `json:"shard"`
	// Over is what the seeds draw from: "4 built-in scenarios",
	// "scenario demo" or "the manifests of DIR".
	Over string `json:"over"`
	// RunFlags are the flags (besides --seed, --scenario, --faults) every
	// replay command carries: --manifests, --limit.
	RunFlags    []string      `json:"runFlags"`
	WallSeconds float64       `json:"wallSeconds"`
	Runs        []runRecord   `json:"runs"`
	Failures    []failure     `json:"failures"`
	Shrunk      *shrunkRecord `json:"shrunk"`
	// Verdict and ExitCode are this result's alone: "ok" (0) or
	// "property-broken" (3); a merge recomputes them over every shard.
	Verdict  string `json:"verdict"`
	ExitCode int    `json:"exitCode"`
	Error    string `json:"error,omitempty"`
}

// seedRange is the seeds From..From+Count-1.
type seedRange struct {
	From  int64 `json:"from"`
	Count int   `json:"count"`
}

// last is the range's last seed (From-1 when empty).
func (r seedRange) last() int64 { return r.From + int64(r.Count) - 1 }

func (r seedRange) String() string {
	if r.Count == 0 {
		return "no seeds"
	}
	return fmt.Sprintf("seeds %d–%d", r.From, r.last())
}

// shardRange is shard Index of Of (0-based, the Job's completion index
// over its completions) and the seeds it covers (From, Count).
type shardRange struct {
	Index int `json:"index"`
	Of    int `json:"of"`
	seedRange
}

// runRecord is one seed's run: the schedule (scenario and fault spec, as
// --faults reads it) and what Stats and the failure list need.
type runRecord struct {
	Seed       int64    `json:"seed"`
	Scenario   string   `json:"scenario"`
	Faults     string   `json:"faults"` // "" for none
	Expected   string   `json:"expected"`
	ElapsedNs  int64    `json:"elapsedNs"` // virtual
	Calls      int      `json:"calls"`
	Violations []string `json:"violations"`
	Error      string   `json:"error,omitempty"`
}

// failure is a failing run: its first violation (or error), its failure
// class and the command that replays it.
type failure struct {
	Seed   int64  `json:"seed"`
	Class  string `json:"class"`
	First  string `json:"first"`
	Replay string `json:"replay"`
}

// shrunkRecord is the result's first failure shrunk: Faults of From
// faults down to To, in Runs runs, replayed by Replay.
type shrunkRecord struct {
	Seed   int64  `json:"seed"`
	From   int    `json:"from"`
	To     int    `json:"to"`
	Runs   int    `json:"runs"`
	Faults string `json:"faults"`
	Replay string `json:"replay"`
}

// shardFlag is --shard i/n.
type shardFlag struct {
	index, count int
	set          bool
}

func (s *shardFlag) String() string {
	if !s.set {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.index, s.count)
}

func (s *shardFlag) Set(v string) error {
	i, n, ok := strings.Cut(v, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || count < 1 || index < 0 || index >= count {
		return fmt.Errorf("want i/n with 0 ≤ i < n (the Job's completion index over its completions), got %q", v)
	}
	*s = shardFlag{index: index, count: count, set: true}
	return nil
}

func (s *shardFlag) Type() string { return "i/n" }

// slice is shard i of n of the seeds: contiguous, disjoint, sizes
// differing by at most one, together exactly all.
func (r seedRange) slice(i, n int) seedRange {
	lo, hi := i*r.Count/n, (i+1)*r.Count/n
	return seedRange{From: r.From + int64(lo), Count: hi - lo}
}

func record(s faults.Summary) runRecord {
	r := runRecord{Seed: s.Schedule.Seed, Scenario: s.Schedule.Scenario, Faults: s.Schedule.Spec(), Expected: s.Expected,
		ElapsedNs: int64(s.Elapsed), Calls: s.Calls, Violations: s.Violations}
	if r.Violations == nil {
		r.Violations = []string{}
	}
	if s.Err != nil {
		r.Error = s.Err.Error()
	}
	return r
}

// summary is the faults.Summary a record was made from (the error only
// as its text).
func (r runRecord) summary() (faults.Summary, error) {
	fs, err := faults.ParseFaults(r.Faults)
	if err != nil {
		return faults.Summary{}, fmt.Errorf("seed %d: faults %q: %w", r.Seed, r.Faults, err)
	}
	s := faults.Summary{Schedule: faults.Schedule{Seed: r.Seed, Scenario: r.Scenario, Faults: fs}, Expected: r.Expected,
		Elapsed: time.Duration(r.ElapsedNs), Calls: r.Calls, Violations: r.Violations}
	if r.Error != "" {
		s.Err = errors.New(r.Error)
	}
	return s, nil
}

// firstProblem is what the failing-runs list prints of a failing run.
func firstProblem(s faults.Summary) string {
	if len(s.Violations) > 0 {
		return s.Violations[0]
	}
	return "error: " + fmt.Sprint(s.Err)
}

// newResult builds the result of sums (one per seed of covered, in order).
func newResult(seeds seedRange, shard shardRange, over string, flags []string, sums []faults.Summary, wall time.Duration) *sweepResult {
	res := &sweepResult{Schema: sweepSchema, Seeds: seeds, Shard: shard, Over: over, RunFlags: flags, WallSeconds: wall.Seconds(),
		Runs: []runRecord{}, Failures: []failure{}}
	if res.RunFlags == nil {
		res.RunFlags = []string{}
	}
	for _, s := range sums {
		res.Runs = append(res.Runs, record(s))
		if s.Failed() {
			res.Failures = append(res.Failures, failure{Seed: s.Schedule.Seed, Class: s.FailureClass(), First: firstProblem(s),
				Replay: s.Schedule.Command(flags...)})
		}
	}
	return res
}

// setVerdict fills Verdict, ExitCode and Error from err (the summary's).
func (r *sweepResult) setVerdict(err error) {
	r.ExitCode, r.Verdict, r.Error = exitCode(err), "ok", ""
	if err != nil {
		r.Verdict, r.Error = "property-broken", err.Error()
	}
}

// writeResult prints r as indented JSON (short lines: a Job's log keeps
// them whole).
func writeResult(w io.Writer, r *sweepResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write sweep result: %w", err)
	}
	return nil
}
