//go:build e2e && mutants

package steps

import (
	"os"
	"testing"

	"github.com/lunadas/upgrade-operator/scenarios/cluster"
	"github.com/lunadas/upgrade-operator/scenarios/mutants"
)

// TestMutantsReal: every mutant must be caught by a @real C01–C04 scenario
// on the local control plane (make test-mutants). Each mutant runs all of
// them, -real.concurrency at a time, so the table shows every catch.
func TestMutantsReal(t *testing.T) {
	base := Config{Backend: realBackend(t), Seed: *seed, Tags: realTags(*tags), Context: t.Context(), Concurrency: *realConcurrency}
	results := RunMutants(base, mutants.All, false)
	WriteMutantTable(os.Stdout, cluster.BackendReal, results)
	judgeMutants(t, results)
}
