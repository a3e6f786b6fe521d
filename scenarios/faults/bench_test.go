package faults

import (
	"context"
	"github.com/lunadas/upgrade-operator/simulator"
	"testing"
	"time"

	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
)

// BenchmarkDemoRun is one undisturbed demo upgrade, from building the
// simulation to Completed (allocs/op is allocations per run).
func BenchmarkDemoRun(b *testing.B) {
	simulator.CheckSharedReads = false // a check for tests, not part of the work measured
	objs, err := demo()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var virtual time.Duration
	for b.Loop() {
		res, err := simrun.Run(context.Background(), simrun.Config{Objects: objs, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		virtual += res.Elapsed
	}
	report(b, virtual)
}

// BenchmarkSeededSchedules runs the schedules of seeds 1, 2, ... as
// `make simulate ARGS="--seeds N"` does, on one goroutine: runs/s,
// virtual:wall and allocations per run.
func BenchmarkSeededSchedules(b *testing.B) {
	simulator.CheckSharedReads = false // a check for tests, not part of the work measured
	b.ReportAllocs()
	names := ScenarioNames()
	var virtual time.Duration
	seed := int64(0)
	for b.Loop() {
		seed++
		o := Run(context.Background(), RunConfig{Schedule: Generate(seed, names)})
		if o.Failed() {
			b.Fatalf("%s: %v %v", o.Schedule, o.Err, o.Violations)
		}
		virtual += o.Result.Elapsed
	}
	report(b, virtual)
}

func report(b *testing.B, virtual time.Duration) {
	wall := b.Elapsed().Seconds()
	if wall <= 0 {
		return
	}
	b.ReportMetric(float64(b.N)/wall, "runs/s")
	b.ReportMetric(virtual.Seconds()/wall, "virtual:wall")
}
