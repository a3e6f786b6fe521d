package workloads

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/scenarios/fidelity"
)

var seed = flag.Int64("seed", 1, "simulation seed")

// goldenPath is where the real controllers' sequences of a scenario are kept.
func goldenPath(name string) string { return filepath.Join("testdata", name+".txt") }

// readGolden returns the sequences of a golden file (comment lines
// dropped): the file on disk, which must be the embedded copy.
func readGolden(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(goldenPath(name))
	if err != nil {
		t.Fatalf("%v: record it with make test-workloads-real", err)
	}
	embedded, err := Recorded(name)
	if err != nil || embedded != string(data) {
		t.Fatalf("embedded sequences of %s differ from %s (%v)", name, goldenPath(name), err)
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasPrefix(l, "#") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestFidelityScenarios: what make fidelity reports of these scenarios —
// every sequence of each kind, none disagreeing in order.
func TestFidelityScenarios(t *testing.T) {
	scs, err := FidelityScenarios(t.Context(), *seed)
	if err != nil {
		t.Fatal(err)
	}
	require.Len(t, scs, len(Scenarios))
	tally := map[string]*fidelity.Tally{}
	for _, s := range scs {
		for _, d := range s.Differences() {
			if tally[d.Kind] == nil {
				tally[d.Kind] = &fidelity.Tally{}
			}
			tally[d.Kind].Add(d)
		}
	}
	require.Len(t, tally, 2, "StatefulSet and DaemonSet")
	for kind, n := range tally {
		t.Logf("%s: %d sequences, %d agree, %d differ in grain, %d in order", kind, n.Total(), n.Agree, n.Grain, n.Order)
		assert.Zero(t, n.Order, kind)
	}
}

// TestSimulatorMatchesRealControllers runs every scenario on the simulator
// and compares its sequences with the ones the real StatefulSet and
// DaemonSet controllers produced (testdata/, recorded on the local control
// plane) as the fidelity report does: entity by entity equal or different
// only in grain, never in order, with the same last state (see Compare).
func TestSimulatorMatchesRealControllers(t *testing.T) {
	for _, sc := range Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			got, err := RunSim(t.Context(), sc, *seed)
			if err != nil {
				t.Fatal(err)
			}
			diffs, err := Compare(readGolden(t, sc.Name), got, sc.Kind())
			for _, d := range diffs {
				t.Log(Verdict(d))
			}
			if err != nil {
				t.Errorf("simulator and real controllers differ (seed %d; replay: go test ./scenarios/fidelity/workloads -run 'TestSimulatorMatchesRealControllers/%s$' -seed %d):\n%v",
					*seed, sc.Name, *seed, err)
			}
		})
	}
}

// TestSameSeedSameSequences: the new kinds replay from a seed.
func TestSameSeedSameSequences(t *testing.T) {
	for _, sc := range Scenarios {
		a, errA := RunSim(t.Context(), sc, 7)
		b, errB := RunSim(t.Context(), sc, 7)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if a != b {
			t.Errorf("%s: same seed, different sequences:\n%s", sc.Name, diff(a, b, "first run", "second run"))
		}
	}
}

// diff shows both versions (labelled wantName, gotName) of the first
// entity that differs.
func diff(want, got, wantName, gotName string) string {
	w, g := sections(want), sections(got)
	for _, k := range append(keys(w), keys(g)...) {
		if w[k] != g[k] {
			return "== " + k + "\n-- " + wantName + ":\n" + w[k] + "-- " + gotName + ":\n" + g[k]
		}
	}
	return "(equal)"
}

func sections(s string) map[string]string {
	out := map[string]string{}
	var cur string
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "== ") {
			cur = strings.TrimSpace(strings.TrimPrefix(l, "== "))
			continue
		}
		out[cur] += l
	}
	return out
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
