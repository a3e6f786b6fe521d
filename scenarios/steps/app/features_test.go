package app

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/lunadas/upgrade-operator/scenarios/cluster"
)

var (
	seed   = flag.Int64("seed", 1, "suite seed: every scenario's seed derives from it and the scenario's name")
	format = flag.String("godog.format", "pretty", "godog formatter: pretty, progress, cucumber, junit...")
	tags   = flag.String("godog.tags", "", "godog tag filter selecting scenarios: ',' is or, '&&' is and, '~' is not, e.g. '@C01,@C02' or '@real && ~@C14'")
)

// TestFeatures runs every scenario of features/ on the simulator, each as
// a subtest (make test-features).
func TestFeatures(t *testing.T) {
	status, outcomes := Run(Config{
		Backend: SimBackend{}, Seed: *seed, T: t, Format: *format, Tags: *tags, Context: t.Context(),
		Replay: fmt.Sprintf("go test ./scenarios/steps/app -run %%s -seed %d -v", *seed),
	})
	logCounts(t, cluster.BackendSim, outcomes)
	if len(outcomes) == 0 {
		t.Fatalf("no scenario matched the tags %q", *tags)
	}
	if status != 0 {
		t.Fatalf("features failed on the simulator (suite seed %d; artifacts under %s)", *seed, ArtifactsDir())
	}
}

func logCounts(t *testing.T, backend string, outcomes []Outcome) {
	passed := 0
	for _, o := range outcomes {
		if o.Passed {
			passed++
		}
	}
	t.Logf("%s: %d scenarios, %d passed", backend, len(outcomes), passed)
	fmt.Fprintf(os.Stderr, "%s: %d scenarios, %d passed\n", backend, len(outcomes), passed)
}
