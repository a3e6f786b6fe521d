package app

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/fidelity"
)

// kindsTraces are the real control plane's event logs of the @real @kinds
// scenarios (real StatefulSet and DaemonSet controllers, kwok nodes),
// kept from a make fidelity run (artifacts/traces/real) so make test
// compares the simulator with them without a cluster. Re-record: make
// fidelity ARGS='-godog.tags=@kinds', then copy the two .jsonl files.
const kindsTraces = "testdata/kinds-real"

// TestKindsFidelityAgainstRecordedTraces runs the @real @kinds scenarios
// on the simulator and compares their state sequences with the recorded
// real ones as make fidelity does: every sequence (the StatefulSet's and
// DaemonSet's status and pods, the Deployments', the upgrade's phases)
// is on both backends and none disagrees in order.
func TestKindsFidelityAgainstRecordedTraces(t *testing.T) {
	_, outcomes := Run(Config{Backend: SimBackend{}, Seed: *seed, Tags: "@real && @kinds", Context: t.Context(), Output: io.Discard})
	if len(outcomes) != 2 {
		t.Fatalf("%d @real @kinds scenarios, want 2 (record the traces of a new one under %s)", len(outcomes), kindsTraces)
	}
	var scenarios []fidelity.Scenario
	kinds := map[string]*fidelity.Tally{}
	for _, o := range outcomes {
		if !o.Passed {
			t.Fatalf("%s failed on the simulator: %s", o.Scenario, o.Err)
		}
		real, err := LoadTrace(kindsTraces, o.Scenario)
		if err != nil {
			t.Fatalf("no recorded real trace of %q (re-record: make fidelity ARGS='-godog.tags=@kinds', copy artifacts/traces/real/%s.jsonl to %s): %v",
				o.Scenario, Slug(o.Scenario), kindsTraces, err)
		}
		s := fidelity.Scenario{Name: o.Scenario, Sim: o.History.Events(), Real: real}
		scenarios = append(scenarios, s)
		for _, d := range s.Differences() {
			if kinds[d.Kind] == nil {
				kinds[d.Kind] = &fidelity.Tally{}
			}
			kinds[d.Kind].Add(d)
			if d.Sim == 0 || d.Real == 0 {
				t.Errorf("%s / %s: only one backend has it (%d simulated states, %d real)", o.Scenario, d.Entity, d.Sim, d.Real)
			}
		}
	}
	for _, k := range []string{eventlog.KindStatefulSet, eventlog.KindDaemonSet} {
		if kinds[k] == nil || kinds[k].Total() == 0 {
			t.Errorf("no %s sequence compared", k)
		}
	}
	var report bytes.Buffer
	if err := fidelity.WriteReport(&report, scenarios); err != nil {
		t.Fatal(err)
	}
	for k, n := range kinds {
		t.Logf("%s: %d sequences, %d agree, %d differ in grain, %d in order", k, n.Total(), n.Agree, n.Grain, n.Order)
		if n.Order > 0 {
			t.Errorf("%s: %d sequences disagree in order with the real controllers (%s):\n%s", k, n.Order, filepath.Join(kindsTraces, "*.jsonl"), report.String())
		}
	}
}
