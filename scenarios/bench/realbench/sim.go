package realbench

import (
	"bufio"
	"io"
	"sort"
	"strconv"
	"strings"
)

// SimBench is one benchmark of `go test -bench` output, medians over its
// lines (-count); the raw file stays benchstat-comparable.
type SimBench struct {
	Name       string  `json:"name"`
	Procs      int     `json:"procs"`
	Samples    int     `json:"samples"`
	NsPerOp    float64 `json:"nsPerOp"`
	RunsPerSec float64 `json:"runsPerSec"`
	// RunsPerCPUSec is runs per second of the process's CPU time.
	RunsPerCPUSec float64 `json:"runsPerCPUSec"`
	VirtualWall   float64 `json:"virtualWall"`
	BytesPerOp    float64 `json:"bytesPerOp"`
	AllocsPerOp   float64 `json:"allocsPerOp"`
}

// SimResult is the simulator phase.
type SimResult struct {
	// File is the go test -bench output it was read from.
	File       string     `json:"file"`
	Benchmarks []SimBench `json:"benchmarks"`
}

// Bench returns the benchmark of name at procs.
func (s *SimResult) Bench(name string, procs int) (SimBench, bool) {
	for _, b := range s.Benchmarks {
		if b.Name == name && b.Procs == procs {
			return b, true
		}
	}
	return SimBench{}, false
}

// ParseBench reads `go test -bench` output: lines "BenchmarkX[-P] N v unit
// v unit ...". Other lines are ignored.
func ParseBench(r io.Reader) ([]SimBench, error) {
	type key struct {
		name  string
		procs int
	}
	samples := map[key]map[string][]float64{}
	var order []key
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue
		}
		k := key{f[0], 1}
		if i := strings.LastIndexByte(f[0], '-'); i > 0 {
			if p, err := strconv.Atoi(f[0][i+1:]); err == nil {
				k = key{f[0][:i], p}
			}
		}
		if samples[k] == nil {
			samples[k] = map[string][]float64{}
			order = append(order, k)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			samples[k][f[i+1]] = append(samples[k][f[i+1]], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := make([]SimBench, 0, len(order))
	for _, k := range order {
		m := samples[k]
		out = append(out, SimBench{Name: k.name, Procs: k.procs, Samples: len(m["ns/op"]),
			NsPerOp: median(m["ns/op"]), RunsPerSec: median(m["runs/s"]), RunsPerCPUSec: median(m["runs/cpu-s"]), VirtualWall: median(m["virtual:wall"]),
			BytesPerOp: median(m["B/op"]), AllocsPerOp: median(m["allocs/op"])})
	}
	return out, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
