package steps

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
// dir/<slug>.jsonl, first line the scenario's name.
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
		errs = append(errs, enc.Encode(map[string]string{"scenario": o.Scenario}))
		for _, e := range o.History.Events() {
			errs = append(errs, enc.Encode(e))
		}
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// LoadTrace reads the event log SaveTraces wrote for scenario.
func LoadTrace(dir, scenario string) ([]eventlog.Event, error) {
	f, err := os.Open(filepath.Join(dir, Slug(scenario)+".jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<24)
	var out []eventlog.Event
	for line := 0; s.Scan(); line++ {
		if line == 0 {
			continue
		}
		var e eventlog.Event
		if err := json.Unmarshal(s.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", f.Name(), line+1, err)
		}
		out = append(out, e)
	}
	return out, s.Err()
}
