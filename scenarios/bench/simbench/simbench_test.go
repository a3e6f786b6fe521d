package simbench

import (
	"context"
	"github.com/lunadas/upgrade-operator/simulator"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunDemo checks that the benchmarked run is the real thing: the demo
// upgrade Completed and ordered, in a plausible virtual time. It times nothing.
func TestRunDemo(t *testing.T) {
	objs, err := DemoObjects()
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []int64{1, 2} {
		virtual, err := RunDemo(context.Background(), objs, seed)
		if err != nil {
			t.Fatal(err)
		}
		if virtual < 20*time.Second || virtual > 10*time.Minute {
			t.Errorf("seed %d: virtual duration %s, want a demo upgrade's (tens of seconds)", seed, virtual)
		}
	}
}

// BenchmarkDemoRun is one demo upgrade in the simulator per iteration (seed
// = iteration, so the kwok jitter varies as in `make simulate --seeds`),
// from building the simulation to Completed. Besides ns/op, B/op and
// allocs/op (allocations per run) it reports runs/s and virtual:wall (virtual
// seconds simulated per wall second) and runs/cpu-s (runs per second of
// CPU time). Run with -cpu 1 for runs/s per core.
func BenchmarkDemoRun(b *testing.B) {
	simulator.CheckSharedReads = false // a check for tests, not part of the work measured
	objs, err := DemoObjects()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	var virtual time.Duration
	seed := int64(0)
	cpu0 := CPUTime()
	for b.Loop() {
		seed++
		v, err := RunDemo(ctx, objs, seed)
		if err != nil {
			b.Fatal(err)
		}
		virtual += v
	}
	report(b, virtual, b.N)
	reportCPU(b, CPUTime()-cpu0, b.N)
}

// BenchmarkDemoRunParallel runs demo upgrades on every P (-cpu) at once:
// runs/s here is the machine's throughput, to compare with -cpu 1.
func BenchmarkDemoRunParallel(b *testing.B) {
	simulator.CheckSharedReads = false // a check for tests, not part of the work measured
	objs, err := DemoObjects()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var virtual, seeds atomic.Int64
	cpu0 := CPUTime()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			v, err := RunDemo(ctx, objs, seeds.Add(1))
			if err != nil {
				b.Error(err)
				return
			}
			virtual.Add(int64(v))
		}
	})
	report(b, time.Duration(virtual.Load()), b.N)
	reportCPU(b, CPUTime()-cpu0, b.N)
}

// reportCPU adds runs/cpu-s: runs per second of CPU time the process used
// (all threads, the GC's included). On a machine whose cores other work
// shares, it is the per-core figure that contention does not dilute.
func reportCPU(b *testing.B, cpu time.Duration, n int) {
	if cpu > 0 && n > 0 {
		b.ReportMetric(float64(n)/cpu.Seconds(), "runs/cpu-s")
	}
}

func report(b *testing.B, virtual time.Duration, n int) {
	wall := b.Elapsed().Seconds()
	if wall <= 0 || n == 0 {
		return
	}
	b.ReportMetric(float64(n)/wall, "runs/s")
	b.ReportMetric(virtual.Seconds()/wall, "virtual:wall")
}
