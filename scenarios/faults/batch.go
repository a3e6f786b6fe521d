package faults

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/controller"
)

// Summary is what a batch keeps of one run (an Outcome without its logs).
type Summary struct {
	Schedule   Schedule
	Expected   string // Completed, Failed, Deleted or mixed
	Elapsed    time.Duration
	Calls      int
	Violations []string
	Err        error
}

// Failed reports whether the run broke a property.
func (s Summary) Failed() bool { return s.Err != nil || len(s.Violations) > 0 }

// Summarize keeps the batch-relevant part of o.
func Summarize(o *Outcome) Summary {
	s := Summary{Schedule: o.Schedule, Expected: o.ExpectedState(), Calls: o.Calls, Violations: o.Violations, Err: o.Err}
	if o.Result != nil {
		s.Elapsed = o.Result.Elapsed
	}
	return s
}

// BatchConfig runs the schedules of seeds From..From+N-1.
type BatchConfig struct {
	From int64
	N    int
	// Scenarios to draw from (names); nil means every built-in one.
	Scenarios []string
	// Objects, when set, replace the scenarios (user manifests).
	Objects []client.Object
	// Workers run in parallel; 0 means GOMAXPROCS.
	Workers int
	// Reconciler customises the reconciler under test (mutants).
	Reconciler func(*controller.ApplicationUpgradeReconciler)
	// Done is called after each run, from the worker goroutines.
	Done func(Summary)
	// StopAtFirstFailure ends the batch early (runs in flight finish).
	StopAtFirstFailure bool
}

// Schedule is the schedule of seed in this batch.
func (c BatchConfig) Schedule(seed int64) Schedule {
	names := c.Scenarios
	if len(names) == 0 {
		names = ScenarioNames()
	}
	if c.Objects != nil {
		names = []string{"manifests"}
	}
	return GenerateFor(seed, names, c.Objects)
}

// RunBatch runs the batch; summaries come back in seed order (those not
// run when stopped early are left out). Each run is independent, so the
// result does not depend on the number of workers.
func RunBatch(ctx context.Context, cfg BatchConfig) []Summary {
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]Summary, cfg.N)
	ran := make([]bool, cfg.N)
	next := make(chan int)
	var stop sync.Once
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := Summarize(Run(ctx, RunConfig{Schedule: cfg.Schedule(cfg.From + int64(i)), Objects: cfg.Objects, Reconciler: cfg.Reconciler}))
				out[i], ran[i] = s, true
				if cfg.Done != nil {
					cfg.Done(s)
				}
				if s.Failed() && cfg.StopAtFirstFailure {
					stop.Do(func() { close(stopped) })
				}
			}
		}()
	}
feed:
	for i := range cfg.N {
		select {
		case next <- i:
		case <-stopped:
			break feed
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	var kept []Summary
	for i, s := range out {
		if ran[i] {
			kept = append(kept, s)
		}
	}
	return kept
}

// Stats aggregates a batch.
type Stats struct {
	Runs, Completed, FailedAsExpected, DeletedAsExpected, Violations int
	P50, P99, Total                                                  time.Duration
	Calls                                                            int
	// ByKind counts runs by the kinds of fault they had.
	ByKind map[Kind]int
	// ByScenario counts runs and violations by scenario ("manifests" for
	// --manifests).
	ByScenario map[string]ScenarioStats
}

// ScenarioStats are one scenario's share of a batch.
type ScenarioStats struct {
	Runs, Violations int
}

// Aggregate computes Stats over summaries.
func Aggregate(sums []Summary) Stats {
	st := Stats{ByKind: map[Kind]int{}, ByScenario: map[string]ScenarioStats{}}
	var ds []time.Duration
	for _, s := range sums {
		st.Runs++
		st.Calls += s.Calls
		ds = append(ds, s.Elapsed)
		st.Total += s.Elapsed
		seen := map[Kind]bool{}
		for _, f := range s.Schedule.Faults {
			if !seen[f.Kind] {
				st.ByKind[f.Kind]++
				seen[f.Kind] = true
			}
		}
		sc := st.ByScenario[s.Schedule.Scenario]
		sc.Runs++
		if s.Failed() {
			sc.Violations++
		}
		st.ByScenario[s.Schedule.Scenario] = sc
		switch {
		case s.Failed():
			st.Violations++
		case s.Expected == ExpectFailed:
			st.FailedAsExpected++
		case s.Expected == ExpectDeleted:
			st.DeletedAsExpected++
		default:
			st.Completed++
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	if len(ds) > 0 {
		st.P50 = ds[(len(ds)-1)*50/100]
		st.P99 = ds[(len(ds)-1)*99/100]
	}
	return st
}

// FailureClass is the kind of a run's first violation, for the shrinker:
// a smaller schedule must fail the same way.
func (s Summary) FailureClass() string { return failureClass(s.Err, s.Violations) }

// FailureClass of an outcome.
func (o *Outcome) FailureClass() string { return failureClass(o.Err, o.Violations) }

func failureClass(err error, vs []string) string {
	switch {
	case err != nil:
		return "error"
	case len(vs) == 0:
		return ""
	}
	v := vs[0]
	for _, c := range []string{"ordering violation", "duplicate write", "two writers", "the run did not finish", "after its upgrade was deleted"} {
		if strings.Contains(v, c) {
			return c
		}
	}
	if strings.HasPrefix(v, "upgrade ") {
		return "unexpected terminal state"
	}
	return fmt.Sprintf("other: %.40s", v)
}
