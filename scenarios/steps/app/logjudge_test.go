package app

import (
	"testing"

	"github.com/lunadas/upgrade-operator/scenarios/faults/mutants"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// judgedFromLogAlone judges h as the out-of-process operator's history is
// judged (cluster.Real.History with -real.operator=process): no recorded
// call; the operator's writes and status claims read from the event log
// (judge.LogWrites, judge.LogClaims)
// against the upgrades — here the graphs the recorded reconciles read,
// where Real lists the upgrades.
func judgedFromLogAlone(h judge.History) *judge.Result {
	var specs []judge.UpgradeSpec
	seen := map[string]bool{}
	for _, op := range h.Ops {
		if u := op.Upgrade; u != nil && !seen[u.Namespace+"/"+u.Name] {
			seen[u.Namespace+"/"+u.Name] = true
			specs = append(specs, *u)
		}
	}
	logOnly := judge.History{Facts: h.Facts, Incomplete: h.Incomplete}
	logOnly.Ops = append(judge.LogWrites(logOnly, specs), judge.LogClaims(logOnly, specs)...)
	return judge.Judge(judge.Input{History: logOnly})
}

// checkLogAloneJudge: the judge of the out-of-process operator (make
// test-e2e), which sees no call, fails every mutant of results that is not
// equivalent on a scenario it ran, and passes the product on every
// MutantTags scenario — the judge alone, before any step's check.
func checkLogAloneJudge(t *testing.T, base Config, results []MutantResult) {
	t.Helper()
	product := RunMutants(base, []mutants.Mutant{{}}, false)[0]
	for _, o := range product.Outcomes {
		if res := judgedFromLogAlone(o.History); !res.OK() {
			t.Errorf("the product's %q judged from its event log alone: %v", o.Scenario, res.Err())
		}
	}
	for _, r := range results {
		if r.Mutant.Equivalent {
			continue
		}
		caught := ""
		for _, o := range r.Outcomes {
			if res := judgedFromLogAlone(o.History); !res.OK() && caught == "" {
				caught = o.Scenario + ": " + res.Summary()
			}
		}
		if caught == "" {
			t.Errorf("mutant %s: the judge of an event log alone passed the scenarios it ran", r.Mutant.Name())
			continue
		}
		t.Logf("mutant %s caught from the event log alone by %s", r.Mutant.Name(), caught)
	}
}
