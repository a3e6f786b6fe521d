package realbench

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Machine describes where a run happened and how busy the machine was.
type Machine struct {
	Cores     int    `json:"cores"`
	CPU       string `json:"cpu"`
	GoVersion string `json:"goVersion"`
	// Load1 are the 1-minute load averages sampled during the run.
	LoadStart float64 `json:"loadStart"`
	LoadMean  float64 `json:"loadMean"`
	LoadMax   float64 `json:"loadMax"`
	LoadEnd   float64 `json:"loadEnd"`
	// ForeignBuildSamples counts samples that saw a Go compiler or linker
	// running (other engineers' builds: make bench starts none while it
	// measures); ForeignBuildMax is the most seen at once.
	Samples             int     `json:"samples"`
	ForeignBuildSamples int     `json:"foreignBuildSamples"`
	ForeignBuildMax     int     `json:"foreignBuildMax"`
	Seconds             float64 `json:"seconds"`
}

type sampler struct {
	mu    sync.Mutex
	m     Machine
	sum   float64
	start time.Time
	stopc chan struct{}
	done  chan struct{}
	once  sync.Once
}

// startSampler samples /proc/loadavg and the running compilers every period.
func startSampler(period time.Duration) *sampler {
	s := &sampler{start: time.Now(), stopc: make(chan struct{}), done: make(chan struct{})}
	s.m = Machine{Cores: runtime.NumCPU(), CPU: cpuModel(), GoVersion: runtime.Version(), LoadStart: load1()}
	go func() {
		defer close(s.done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-t.C:
			case <-s.stopc:
				return
			}
		}
	}()
	return s
}

func (s *sampler) sample() {
	l, builds := load1(), foreignBuilds()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.Samples++
	s.sum += l
	s.m.LoadMax = max(s.m.LoadMax, l)
	if builds > 0 {
		s.m.ForeignBuildSamples++
	}
	s.m.ForeignBuildMax = max(s.m.ForeignBuildMax, builds)
}

// stop ends sampling (once) and returns the figures.
func (s *sampler) stop() Machine {
	s.once.Do(func() { close(s.stopc); <-s.done })
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.m
	if m.Samples > 0 {
		m.LoadMean = s.sum / float64(m.Samples)
	}
	m.LoadEnd = load1()
	m.Seconds = time.Since(s.start).Seconds()
	return m
}

func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// foreignBuilds counts running Go compiler and linker processes (their
// command name only is read).
func foreignBuilds() int {
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	n := 0
	for _, p := range comms {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		switch strings.TrimSpace(string(b)) {
		case "compile", "link", "asm", "cgo", "vet":
			n++
		}
	}
	return n
}
