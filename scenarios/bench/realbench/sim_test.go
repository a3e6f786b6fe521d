package realbench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const benchOut = `goos: linux
goarch: amd64
pkg: github.com/lunadas/upgrade-operator/scenarios/bench/simbench
cpu: Intel(R) Xeon(R) Processor
BenchmarkDemoRun         	      34	 106686129 ns/op	         9.9 runs/cpu-s	         9.373 runs/s	       522.1 virtual:wall	37938340 B/op	  258445 allocs/op
BenchmarkDemoRun         	      30	 100000000 ns/op	        10.000 runs/s	       500.0 virtual:wall	37938000 B/op	  258000 allocs/op
BenchmarkDemoRun         	      30	 120000000 ns/op	         8.000 runs/s	       450.0 virtual:wall	37938000 B/op	  258100 allocs/op
BenchmarkDemoRunParallel-2 	      21	 52446120 ns/op	        19.06 runs/s	       963.7 virtual:wall	38023470 B/op	  258813 allocs/op
PASS
ok  	github.com/lunadas/upgrade-operator/scenarios/bench/simbench	7.028s
`

func TestParseBench(t *testing.T) {
	got, err := ParseBench(strings.NewReader(benchOut))
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, SimBench{Name: "BenchmarkDemoRun", Procs: 1, Samples: 3, NsPerOp: 106686129, RunsPerSec: 9.373, RunsPerCPUSec: 9.9,
		VirtualWall: 500, BytesPerOp: 37938000, AllocsPerOp: 258100}, got[0])
	assert.Equal(t, "BenchmarkDemoRunParallel", got[1].Name)
	assert.Equal(t, 2, got[1].Procs)
	assert.Equal(t, 19.06, got[1].RunsPerSec)
}
