package workloads

import (
	"context"
	"embed"
	"fmt"

	"github.com/lunadas/upgrade-operator/scenarios/fidelity"
)

// recorded holds the real controllers' sequences of every scenario
// (testdata/<name>.txt, recorded by make test-workloads-real ARGS=-rewrite).
//
//go:embed testdata/*.txt
var recorded embed.FS

// Recorded is the committed real sequences of the scenario name (Format
// output, "#" comment lines included).
func Recorded(name string) (string, error) {
	b, err := recorded.ReadFile("testdata/" + name + ".txt")
	if err != nil {
		return "", fmt.Errorf("workloads: no recorded sequences of scenario %q (record it with make test-workloads-real ARGS=-rewrite): %w", name, err)
	}
	return string(b), nil
}

// FidelityScenarios runs every scenario on the simulator (seed seed) and
// compares it with its committed real sequences (Compare), as scenarios
// for the fidelity report (make fidelity): one comparison, the report's.
// The error joins the scenarios that failed to run or disagree.
func FidelityScenarios(ctx context.Context, seed int64) ([]fidelity.Scenario, error) {
	var out []fidelity.Scenario
	var errs []error
	for _, sc := range Scenarios {
		real, err := Recorded(sc.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sim, err := RunSim(ctx, sc, seed)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		diffs, err := Compare(real, sim, sc.Kind())
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sc.Name, err))
		}
		out = append(out, fidelity.Scenario{Name: "controllers: " + sc.Name, Diffs: diffs})
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("workloads: %d of %d scenarios: %v", len(errs), len(Scenarios), errs)
	}
	return out, nil
}
