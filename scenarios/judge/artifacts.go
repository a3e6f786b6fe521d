package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/lunadas/upgrade-operator/scenarios/render/timeline"
)

// Artifact file names inside a scenario's artifacts folder.
const (
	VisualizationFile = "porcupine.html"
	EventLogFile      = "events.jsonl"
	OpsFile           = "ops.jsonl"
	VerdictFile       = "verdict.txt"
	TimelineFile      = "timeline.svg"
)

// WriteArtifacts writes into dir (created if needed): porcupine's HTML
// visualization of the history under Model (pod lifecycles and template
// writes as annotations), the SVG timeline of the event log
// (scenarios/render/timeline), the event log and the operator's calls as JSON
// Lines (the calls Judge derived from the log included, fromLog set), and
// the verdict followed by notes (the seed and the replay command).
func (r *Result) WriteArtifacts(dir string, h History, notes string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create artifacts folder %s: %w", dir, err)
	}
	if len(r.history.Ops) > len(h.Ops) {
		h.Ops = r.history.Ops // with the writes Judge read from the log
	}
	var errs []error
	errs = append(errs, porcupine.VisualizePath(Model, r.visualization(h), filepath.Join(dir, VisualizationFile)))
	errs = append(errs, writeTimeline(filepath.Join(dir, TimelineFile), h, notes))
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

// ArtifactPaths are the files WriteArtifacts writes into dir, for a
// runner to print.
func ArtifactPaths(dir string) []string {
	return []string{filepath.Join(dir, VisualizationFile), filepath.Join(dir, TimelineFile), filepath.Join(dir, EventLogFile),
		filepath.Join(dir, OpsFile), filepath.Join(dir, VerdictFile)}
}

// visualization is porcupine's linearization info of r's history,
// computed on first use (the check itself runs without it).
func (r *Result) visualization(h History) porcupine.LinearizationInfo {
	if !r.infoSet {
		_, r.info = porcupine.CheckOperationsVerbose(Model, r.ops, CheckTimeout)
		r.info.AddAnnotations(Annotations(h))
		r.infoSet = true
	}
	return r.info
}

func writeTimeline(path string, h History, title string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create timeline: %w", err)
	}
	if title == "" {
		title = "timeline"
	}
	if i := strings.IndexByte(title, '\n'); i > 0 {
		title = title[:i]
	}
	if err := timeline.Render(f, timeline.Input{Title: title, Events: h.Events(), Faults: h.Faults}); err != nil {
		f.Close()
		return fmt.Errorf("write timeline %s: %w", path, err)
	}
	return f.Close()
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
