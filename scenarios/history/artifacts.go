package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/anishathalye/porcupine"
)

// Artifact file names inside a scenario's artifacts folder.
const (
	VisualizationFile = "porcupine.html"
	EventLogFile      = "events.jsonl"
	OpsFile           = "ops.jsonl"
	VerdictFile       = "verdict.txt"
)

// WriteArtifacts writes into dir (created if needed): porcupine's HTML
// visualization of the history under Model, the detailed event log and
// the operator's calls as JSON Lines, and the verdict followed by notes
// (the seed and the replay command).
func (r *Result) WriteArtifacts(dir string, h History, notes string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create artifacts folder %s: %w", dir, err)
	}
	var errs []error
	errs = append(errs, porcupine.VisualizePath(Model, r.info, filepath.Join(dir, VisualizationFile)))
	facts := make([]any, len(h.Facts))
	for i := range h.Facts {
		facts[i] = h.Facts[i].Event
	}
	errs = append(errs, writeJSONL(filepath.Join(dir, EventLogFile), facts))
	ops := make([]any, len(h.Ops))
	for i := range h.Ops {
		ops[i] = h.Ops[i]
	}
	errs = append(errs, writeJSONL(filepath.Join(dir, OpsFile), ops))
	verdict := "all checks passed\n"
	if err := r.Err(); err != nil {
		verdict = err.Error() + "\n"
	}
	errs = append(errs, os.WriteFile(filepath.Join(dir, VerdictFile), []byte(verdict+"\n"+notes+"\n"), 0o644))
	return errors.Join(errs...)
}

func writeJSONL(path string, items []any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return f.Close()
}
