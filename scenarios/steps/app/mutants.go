package app

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/lunadas/upgrade-operator/scenarios/faults/mutants"
)

// MutantTags selects the scenarios mutants are run against: C01–C04.
const MutantTags = "@mutants"

// MutantResult is one mutant's run of the C01–C04 scenarios.
type MutantResult struct {
	Mutant   mutants.Mutant
	Outcomes []Outcome
}

// Caught reports whether a check caught the mutant: a scenario failed in a
// When/Then step or in the history check (a failed Given step is a broken
// run, not a catch).
func (r MutantResult) Caught() bool {
	for _, o := range r.Outcomes {
		if !o.Passed && o.Stage != "setup" {
			return true
		}
	}
	return false
}

// Broken lists scenarios whose setup failed.
func (r MutantResult) Broken() []string {
	var out []string
	for _, o := range r.Outcomes {
		if !o.Passed && o.Stage == "setup" {
			out = append(out, o.Scenario+": "+o.Err)
		}
	}
	return out
}

// RunMutants runs the MutantTags scenarios (also filtered by tags, if set)
// against each mutant on backend. stopEarly stops a mutant's run at its
// first failing scenario.
func RunMutants(base Config, ms []mutants.Mutant, stopEarly bool) []MutantResult {
	var out []MutantResult
	for _, m := range ms {
		cfg := base
		cfg.Policy, cfg.T, cfg.ExpectFailures, cfg.StopOnFailure = m.Policy, nil, true, stopEarly && !m.Equivalent
		cfg.Tags = AndTags(MutantTags, base.Tags)
		if cfg.Output == nil {
			cfg.Output = io.Discard
		}
		_, outcomes := Run(cfg)
		sort.SliceStable(outcomes, func(i, j int) bool { return outcomes[i].Scenario < outcomes[j].Scenario })
		out = append(out, MutantResult{Mutant: m, Outcomes: outcomes})
	}
	return out
}

// WriteMutantTable prints one row per mutant and scenario: which check
// caught it, or "survived".
func WriteMutantTable(w io.Writer, backend string, results []MutantResult) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "MUTANT (%s)\tSCENARIO\tVERDICT\tCAUGHT BY\n", backend)
	for _, r := range results {
		for _, o := range r.Outcomes {
			verdict, by := "survived", ""
			switch {
			case o.Passed:
			case o.Stage == "setup":
				verdict, by = "BROKEN RUN", firstLine(o.Err)
			default:
				verdict, by = "caught", caughtBy(o)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Mutant.Name(), shorten(o.Scenario, 48), verdict, by)
		}
		summary := "NOT CAUGHT"
		switch {
		case r.Mutant.Equivalent && !r.Caught():
			summary = "passes, as expected (equivalent)"
		case r.Mutant.Equivalent:
			summary = "FLAGGED (false alarm?)"
		case r.Caught():
			summary = "CAUGHT"
		}
		fmt.Fprintf(tw, "%s\t\t%s\t%s\n", r.Mutant.Name(), "=> "+summary, r.Mutant.Description)
	}
	tw.Flush()
}

func caughtBy(o Outcome) string {
	var parts []string
	if o.Stage == "step" {
		parts = append(parts, "step \""+shorten(o.Step, 56)+"\"")
	}
	if len(o.Checks) > 0 {
		parts = append(parts, "history: "+strings.Join(o.Checks, ", "))
	}
	return strings.Join(parts, "; ")
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
