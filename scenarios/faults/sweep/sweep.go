// Package sweep is the crash-point sweep: for a scenario, the operator is
// killed after its k-th API call, for every k from 0 up to its last call
// in an undisturbed run, and restarts with a cold cache. Every run must
// complete with each target image written once per Deployment and no
// early API write.
package sweep

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
)

// Down is how long each killed operator stays down.
const Down = 2 * time.Second

// Config is one scenario's sweep.
type Config struct {
	Scenario string
	// Objects, when set, replace the built-in scenario (user manifests).
	Objects []client.Object
	Seed    int64
	Workers int
	// Stride > 1 samples every Stride-th crash point (quick checks); 0 or
	// 1 sweeps them all.
	Stride int
	// Reconciler customises the reconciler under test (mutants).
	Reconciler func(*controller.ApplicationUpgradeReconciler)
	// Started is called once the number of crash points is known;
	// Done after each run (from worker goroutines).
	Started func(points int)
	Done    func()
}

// Failure is a crash point whose run broke a property.
type Failure struct {
	Schedule   faults.Schedule
	Violations []string
}

// Report is a scenario's sweep.
type Report struct {
	Scenario string
	// Calls is the operator's API calls in the undisturbed run: crash
	// points 0..Calls-1 (killed after call k, before call k+1).
	Calls    int
	Runs     int
	Failures []Failure
}

// Run sweeps one scenario.
func Run(ctx context.Context, cfg Config) (Report, error) {
	rep := Report{Scenario: cfg.Scenario}
	base := faults.Run(ctx, faults.RunConfig{Schedule: faults.Schedule{Seed: cfg.Seed, Scenario: cfg.Scenario}, Objects: cfg.Objects, Reconciler: cfg.Reconciler})
	if base.Err != nil {
		return rep, base.Err
	}
	rep.Calls = base.Calls
	if cfg.Started != nil {
		cfg.Started((rep.Calls + max(cfg.Stride, 1) - 1) / max(cfg.Stride, 1))
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				s := faults.Schedule{Seed: cfg.Seed, Scenario: cfg.Scenario, Faults: []faults.Fault{CrashAfter(k)}}
				o := faults.Run(ctx, faults.RunConfig{Schedule: s, Objects: cfg.Objects, Reconciler: cfg.Reconciler})
				v := append(o.Violations, Check(o)...)
				mu.Lock()
				rep.Runs++
				if o.Err != nil || len(v) > 0 {
					if o.Err != nil {
						v = append(v, o.Err.Error())
					}
					rep.Failures = append(rep.Failures, Failure{Schedule: s, Violations: v})
				}
				mu.Unlock()
				if cfg.Done != nil {
					cfg.Done()
				}
			}
		}()
	}
	stride := max(cfg.Stride, 1)
	for k := 0; k < rep.Calls && ctx.Err() == nil; k += stride {
		next <- k
	}
	close(next)
	wg.Wait()
	sort.Slice(rep.Failures, func(i, j int) bool {
		return rep.Failures[i].Schedule.Faults[0].Call < rep.Failures[j].Schedule.Faults[0].Call
	})
	return rep, ctx.Err()
}

// CrashAfter kills the operator after its k-th API call (before call k+1).
func CrashAfter(k int) faults.Fault {
	return faults.Fault{Kind: faults.Crash, Call: k + 1, Args: map[string]string{"down": Down.String()}}
}

// Check is the sweep's own property on top of the run's: each upgrade
// Completed, its worker and API Deployments — every component's workload,
// of any kind, for an upgrade given as a graph — written exactly once
// with their target images.
func Check(o *faults.Outcome) []string {
	if o.Result == nil {
		return nil
	}
	var out []string
	count := map[string]int{}
	for _, w := range o.Writes {
		count[w.Deployment+"="+w.Image]++
	}
	for _, key := range sortedKeys(o.Result.Graphs) {
		g := o.Result.Graphs[key]
		for _, c := range g.Spec.Components {
			ns, name := c.WorkloadNamespace(g.Namespace), c.WorkloadName()
			w := ns + "/" + name
			if k := c.Kind(); k != upgradesv1beta1.KindDeployment {
				w = strings.ToLower(string(k)) + "/" + w
			}
			if n := count[w+"="+c.Image]; n != 1 {
				out = append(out, fmt.Sprintf("%s %s/%s (component %s of %s) written %d times with %s, want once",
					strings.ToLower(string(c.Kind())), ns, name, c.Name, key, n, c.Image))
			}
		}
	}
	for _, u := range o.Result.Upgrades {
		if _, graph := o.Result.Graphs[u.Namespace+"/"+u.Name]; graph {
			continue
		}
		for _, c := range []struct{ dep, image string }{
			{u.Spec.Worker.DeploymentRef.Name, u.Spec.Worker.Image},
			{u.Spec.API.DeploymentRef.Name, u.Spec.API.Image},
		} {
			key := u.Namespace + "/" + c.dep + "=" + c.image
			if n := count[key]; n != 1 {
				out = append(out, fmt.Sprintf("deployment %s/%s written %d times with %s, want once", u.Namespace, c.dep, n, c.image))
			}
		}
	}
	return out
}

// String is a one-line summary.
func (r Report) String() string {
	status := "ok"
	if len(r.Failures) > 0 {
		var ks []string
		for _, f := range r.Failures {
			ks = append(ks, fmt.Sprint(f.Schedule.Faults[0].Call-1))
		}
		status = fmt.Sprintf("%d failed (after calls %s)", len(r.Failures), strings.Join(ks, ","))
	}
	return fmt.Sprintf("%-10s crash points %4d  runs %4d  %s", r.Scenario, r.Calls, r.Runs, status)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
