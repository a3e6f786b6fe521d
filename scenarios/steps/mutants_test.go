package steps

import (
	"flag"
	"os"
	"testing"

	"github.com/lunadas/upgrade-operator/scenarios/mutants"
)

var allMutantScenarios = flag.Bool("mutants.all", false, "run every C01–C04 scenario against each mutant instead of stopping at the first catch")

// TestMutants proves on the simulator that the checks can fail: every
// mutant of mutants.All must be caught by a C01–C04 scenario, and the
// equivalent mutants (masked by the product's other guards) must pass.
func TestMutants(t *testing.T) {
	base := Config{Backend: SimBackend{}, Seed: *seed, Context: t.Context()}
	results := RunMutants(base, append(append([]mutants.Mutant(nil), mutants.All...), mutants.Equivalents...), !*allMutantScenarios && !testing.Verbose())
	WriteMutantTable(os.Stdout, "sim", results)
	judgeMutants(t, results)
}

func judgeMutants(t *testing.T, results []MutantResult) {
	t.Helper()
	for _, r := range results {
		if broken := r.Broken(); len(broken) > 0 {
			t.Errorf("mutant %s: runs broke during setup (not a catch): %v", r.Mutant.Name(), broken)
		}
		switch {
		case r.Mutant.Equivalent && r.Caught():
			t.Errorf("equivalent mutant %s was flagged: a check fails on a safe operator", r.Mutant.Name())
		case !r.Mutant.Equivalent && !r.Caught():
			t.Errorf("mutant %s survived C01–C04: no check caught it", r.Mutant.Name())
		}
		if len(r.Outcomes) == 0 {
			t.Errorf("mutant %s: no scenario ran", r.Mutant.Name())
		}
	}
}
