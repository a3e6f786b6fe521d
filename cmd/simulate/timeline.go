package main

import (
	"fmt"
	"os"
	"time"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/render/timeline"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
)

// writeTimeline draws res (and the faults that fired) to path.
func writeTimeline(path, title string, res *simrun.Result, fired []faults.Fired, _ time.Duration) error {
	in := timeline.Input{Title: title, Events: res.Events}
	for _, u := range res.Upgrades {
		if g, ok := res.Graphs[u.Namespace+"/"+u.Name]; ok {
			for _, c := range g.Spec.Components {
				in.Order = append(in.Order, c.WorkloadName())
			}
			continue
		}
		in.Order = append(in.Order, u.Spec.Worker.DeploymentRef.Name, u.Spec.API.DeploymentRef.Name)
	}
	in.Faults = faults.Spans(fired)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create timeline: %w", err)
	}
	if err := timeline.Render(f, in); err != nil {
		f.Close()
		return fmt.Errorf("write timeline %s: %w", path, err)
	}
	return f.Close()
}
