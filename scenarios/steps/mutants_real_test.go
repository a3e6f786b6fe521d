//go:build e2e && mutants

package steps

import (
	"os"
	"testing"

	"github.com/lunadas/upgrade-operator/scenarios/cluster"
	"github.com/lunadas/upgrade-operator/scenarios/mutants"
)

// TestMutantsReal: every mutant must be caught by a @real C01–C04 scenario
// on the local control plane (make test-mutants). A mutant's run stops at
// its first catch unless -mutants.all.
func TestMutantsReal(t *testing.T) {
	base := Config{Backend: realBackend(t), Seed: *seed, Tags: realTags(*tags), Context: t.Context()}
	results := RunMutants(base, mutants.All, !*allMutantScenarios)
	WriteMutantTable(os.Stdout, cluster.BackendReal, results)
	judgeMutants(t, results)
}
