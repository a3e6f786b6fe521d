//go:build e2e && fidelity

package app

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/lunadas/upgrade-operator/scenarios/fidelity"
)

var fidelityDump = flag.String("fidelity.dump", "", "print, side by side, the sequences that do not agree of the scenarios whose names match this regular expression")

var fidelityReuse = flag.Bool("fidelity.reuse", false, "take the real cluster's event logs from the last TestFeaturesReal run (artifacts/traces/real) instead of running the scenarios again")

// TestFidelity runs the @real scenarios on the simulator and (unless
// -fidelity.reuse finds their logs) on the local control plane, and prints
// the fidelity report (make fidelity). It fails only when a run fails,
// not when the backends disagree: the disagreements are the report.
func TestFidelity(t *testing.T) {
	cfg := Config{Seed: *seed, Tags: realTags(*tags), Context: t.Context(), Output: io.Discard}
	cfg.Backend = SimBackend{}
	_, simOut := Run(cfg)
	dir := realTraces()
	var scenarios []fidelity.Scenario
	missing := false
	for _, o := range simOut {
		if !*fidelityReuse {
			missing = true
			break
		}
		events, err := LoadTrace(dir, o.Scenario)
		if err != nil {
			missing = true
			break
		}
		scenarios = append(scenarios, fidelity.Scenario{Name: o.Scenario, Sim: o.History.Events(), Real: events})
	}
	if missing {
		scenarios = nil
		cfg.Backend, cfg.RealNode = realBackend(t), *realNode
		status, realOut := Run(cfg)
		if err := SaveTraces(dir, realOut); err != nil {
			t.Errorf("save traces: %v", err)
		}
		if status != 0 {
			t.Errorf("some scenarios failed on the real control plane; the report compares them anyway")
		}
		byName := map[string]Outcome{}
		for _, o := range realOut {
			byName[o.Scenario] = o
		}
		for _, o := range simOut {
			scenarios = append(scenarios, fidelity.Scenario{Name: o.Scenario, Sim: o.History.Events(), Real: byName[o.Scenario].History.Events()})
		}
	}
	for _, o := range simOut {
		if !o.Passed {
			t.Errorf("scenario %q failed on the simulator: %s", o.Scenario, o.Err)
		}
	}
	scenarios = append(scenarios, workloadFidelity(t)...)
	var buf bytes.Buffer
	if err := fidelity.WriteReport(io.MultiWriter(os.Stdout, &buf), scenarios); err != nil {
		t.Fatal(err)
	}
	if *fidelityDump != "" {
		re, err := regexp.Compile(*fidelityDump)
		if err != nil {
			t.Fatalf("-fidelity.dump: %v", err)
		}
		for _, s := range scenarios {
			if re.MatchString(s.Name) {
				if err := fidelity.WriteSequences(io.MultiWriter(os.Stdout, &buf), s); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if *realNode {
		writeCrashLoopFidelity(t, io.MultiWriter(os.Stdout, &buf), scenarios)
	}
	report := filepath.Join(ArtifactsDir(), "fidelity.txt")
	if *realNode {
		report = filepath.Join(ArtifactsDir(), "fidelity-real-node.txt")
	}
	if err := os.WriteFile(report, buf.Bytes(), 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("fidelity report written to %s", report)
}
