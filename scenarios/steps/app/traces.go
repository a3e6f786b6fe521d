package app

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// TracesDir is where a backend's scenario event logs are kept for the
// fidelity report.
func TracesDir(backend string) string { return filepath.Join(ArtifactsDir(), "traces", backend) }

// SaveTraces writes each scenario's detailed event log to
// dir/<slug>.jsonl: first line the scenario's name, then the event log
// (its header line, then one event a line).
func SaveTraces(dir string, outcomes []Outcome) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var errs []error
	for _, o := range outcomes {
		f, err := os.Create(filepath.Join(dir, Slug(o.Scenario)+".jsonl"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		enc := json.NewEncoder(f)
		errs = append(errs, enc.Encode(map[string]string{"scenario": o.Scenario}), eventlog.WriteHeader(f))
		for _, e := range o.History.Events() {
			errs = append(errs, enc.Encode(e))
		}
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// LoadTrace reads the event log SaveTraces wrote for scenario; a trace of
// an older event log version is refused (eventlog.Read).
func LoadTrace(dir, scenario string) ([]eventlog.Event, error) {
	f, err := os.Open(filepath.Join(dir, Slug(scenario)+".jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	if _, err := r.ReadBytes('\n'); err != nil {
		return nil, fmt.Errorf("%s: no scenario line: %w", f.Name(), err)
	}
	return eventlog.Read(r, f.Name())
}
