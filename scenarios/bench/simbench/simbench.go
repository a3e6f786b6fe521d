// Package simbench measures the simulator's speed on the demo upgrade
// (deploy/demo and deploy/samples): one run of scenarios/sim/simrun per
// iteration, from building the simulation to the upgrade Completed. The
// figures come only from `go test -bench` (see BenchmarkDemoRun); nothing
// here is timed in an ordinary test.
package simbench

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/deploy"
	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/input/manifests"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
)

// DemoObjects returns the demo application and its sample ApplicationUpgrade.
func DemoObjects() ([]client.Object, error) {
	return manifests.LoadFS(deploy.Demo, ".", manager.NewScheme())
}

// RunDemo runs the demo upgrade once with seed and returns its virtual
// duration. It fails unless the run is ordered and Completed.
func RunDemo(ctx context.Context, objs []client.Object, seed int64) (time.Duration, error) {
	res, err := simrun.Run(ctx, simrun.Config{Objects: objs, Seed: seed})
	if err != nil {
		return 0, err
	}
	for _, u := range res.Upgrades {
		if u.Status.Phase != upgradesv1alpha1.PhaseCompleted {
			return 0, fmt.Errorf("seed %d: upgrade %s/%s ended %s: %s", seed, u.Namespace, u.Name, u.Status.Phase, u.Status.Message)
		}
		if v := res.Reports[u.Namespace+"/"+u.Name].Violations; len(v) > 0 {
			return 0, fmt.Errorf("seed %d: ordering violation: %s", seed, v[0])
		}
	}
	if len(res.Upgrades) == 0 {
		return 0, fmt.Errorf("seed %d: no upgrade ran", seed)
	}
	return res.Elapsed, nil
}
