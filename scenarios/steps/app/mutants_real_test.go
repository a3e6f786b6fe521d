//go:build e2e && mutants

package app

import (
	"flag"
	"os"
	"testing"

	"github.com/lunadas/upgrade-operator/scenarios/cluster"
	"github.com/lunadas/upgrade-operator/scenarios/faults/mutants"
)

var mutantName = flag.String("mutant", "", "run only the mutant of this name (e.g. counters-only); default all")

// TestMutantsReal: every mutant must be caught by a @real C01–C04 scenario
// on the local control plane (make test-mutants). Each mutant runs all of
// them, -real.concurrency at a time, so the table shows every catch.
//
// -mutant picks one mutant by name (make test-node-features: counters-only
// on the real node's scenarios).
func TestMutantsReal(t *testing.T) {
	base := Config{Backend: realBackend(t), Seed: *seed, Tags: realTags(*tags), Context: t.Context(), Concurrency: *realConcurrency, RealNode: *realNode}
	ms := mutants.All
	if *mutantName != "" {
		ms = nil
		for _, m := range mutants.All {
			if m.Name() == *mutantName {
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			t.Fatalf("-mutant %q: no such mutant (see scenarios/faults/mutants)", *mutantName)
		}
	}
	results := RunMutants(base, ms, false)
	WriteMutantTable(os.Stdout, cluster.BackendReal, results)
	judgeMutants(t, results)
}
