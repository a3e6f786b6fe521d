package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
)

// artifactsRoot is the folder a failing run's artifacts go under: beside
// the event log of --events ("<dir of the log>/simulate-artifacts"),
// else "simulate-artifacts" in the system's temporary folder.
func artifactsRoot(o options) string {
	if o.events != "" {
		return filepath.Join(filepath.Dir(o.events), "simulate-artifacts")
	}
	return filepath.Join(os.TempDir(), "simulate-artifacts")
}

// artifactsDir is the folder of one run: "seed-N", with the scenario
// when there is one ("seed-N-graph-diamond").
func artifactsDir(o options, seed int64, scenario string) string {
	name := fmt.Sprintf("seed-%d", seed)
	if scenario != "" {
		name += "-" + scenario
	}
	return filepath.Join(artifactsRoot(o), name)
}

// writeArtifacts writes the one judge's artifacts of res into dir
// (judge.Result.WriteArtifacts: porcupine.html annotated with the pod
// lifecycles and template writes, timeline.svg, events.jsonl, ops.jsonl
// and verdict.txt followed by notes) and returns the line naming them.
func writeArtifacts(dir string, res *simrun.Result, notes string) (string, error) {
	j := res.Judged
	if j == nil {
		j = judge.Judge(judge.Input{History: judge.FromEvents(res.Events)})
	}
	h := j.History() // the operator's calls too where the run recorded them
	if err := j.WriteArtifacts(dir, h, notes); err != nil {
		return "", fmt.Errorf("write artifacts to %s: %w", dir, err)
	}
	return "artifacts: " + strings.Join(judge.ArtifactPaths(dir), " "), nil
}

// replayArtifacts runs schedule s again (runs are deterministic) and
// writes its artifacts: the --seeds and --crash-sweep batches keep no
// event log of their runs, so a failing one is replayed for it.
func replayArtifacts(ctx context.Context, o options, s faults.Schedule, objs []clientObject, cmd string) (string, error) {
	out := faults.Run(ctx, faults.RunConfig{Schedule: s, Objects: objs, Limit: o.limit.d})
	if out.Result == nil {
		return "", fmt.Errorf("replay %s for its artifacts: %w", s, out.Err)
	}
	return writeArtifacts(artifactsDir(o, s.Seed, s.Scenario), out.Result, "replay: "+cmd+"\n"+strings.Join(out.Violations, "\n"))
}
