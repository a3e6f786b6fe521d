package opstats

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Snapshot is the operator process's state at one moment.
type Snapshot struct {
	// Synced is true once the manager's caches have synced; SyncSeconds is
	// how long that took from process start.
	Synced      bool    `json:"synced"`
	SyncSeconds float64 `json:"syncSeconds"`
	// Requests are API requests made so far, by RequestKey.
	Requests map[string]int64 `json:"requests"`
	// NamespaceRequests are the requests other than watches by namespace.
	NamespaceRequests map[string]int64 `json:"namespaceRequests"`
	// Reconciles are controller_runtime_reconcile_total of Controller by result.
	Reconciles map[string]int64 `json:"reconciles"`
	// Handoff is the operator's own
	// upgrade_operator_applicationupgrade_handoff_seconds; ReconcileTime is
	// controller_runtime_reconcile_time_seconds and QueueWait
	// workqueue_queue_duration_seconds (time a request waited in the
	// workqueue before a worker took it), both of Controller.
	Handoff       Hist `json:"handoff"`
	ReconcileTime Hist `json:"reconcileTime"`
	QueueWait     Hist `json:"queueWait"`
	// HeapAlloc is the live heap after a forced GC; HeapSys and Sys as in runtime.MemStats.
	HeapAlloc uint64 `json:"heapAlloc"`
	HeapSys   uint64 `json:"heapSys"`
	Sys       uint64 `json:"sys"`
	// RSS and PeakRSS are VmRSS and VmHWM of /proc/self/status in bytes (0 off Linux).
	RSS     int64 `json:"rss"`
	PeakRSS int64 `json:"peakRSS"`
	// CPUSeconds is the process's user+system CPU time so far (before the
	// snapshot's own GC).
	CPUSeconds float64 `json:"cpuSeconds"`
	// Goroutines is runtime.NumGoroutine().
	Goroutines int `json:"goroutines"`
}

// ReconcileTotal sums Reconciles over results.
func (s Snapshot) ReconcileTotal() int64 {
	var n int64
	for _, v := range s.Reconciles {
		n += v
	}
	return n
}

// Source assembles Snapshots for one process.
type Source struct {
	Counter *Counter
	// Controller is the controller name whose reconciles are counted.
	Controller string
	// Gatherer defaults to controller-runtime's metrics.Registry.
	Gatherer prometheus.Gatherer
	start    time.Time
	synced   atomic.Int64 // nanoseconds from start; 0 = not yet
}

// NewSource starts the process clock used for SyncSeconds.
func NewSource(c *Counter, controller string) *Source {
	return &Source{Counter: c, Controller: controller, start: time.Now()}
}

// MarkSynced records that the caches synced now.
func (s *Source) MarkSynced() { s.synced.Store(int64(max(time.Since(s.start), 1))) }

// Snapshot collects a Snapshot, forcing a GC first so HeapAlloc is the live heap.
func (s *Source) Snapshot() (Snapshot, error) {
	snap := Snapshot{Requests: s.Counter.Counts(), NamespaceRequests: s.Counter.NamespaceCounts(), Reconciles: map[string]int64{}, Goroutines: runtime.NumGoroutine()}
	if d := s.synced.Load(); d > 0 {
		snap.Synced, snap.SyncSeconds = true, time.Duration(d).Seconds()
	}
	g := s.Gatherer
	if g == nil {
		g = metrics.Registry
	}
	families, err := g.Gather()
	if err != nil {
		return snap, fmt.Errorf("gather metrics: %w", err)
	}
	for _, f := range families {
		switch f.GetName() {
		case "controller_runtime_reconcile_total":
			for _, m := range f.GetMetric() {
				if label(m, "controller") == s.Controller {
					snap.Reconciles[label(m, "result")] += int64(m.GetCounter().GetValue())
				}
			}
		case "upgrade_operator_applicationupgrade_handoff_seconds":
			for _, m := range f.GetMetric() {
				snap.Handoff.add(m.GetHistogram())
			}
		case "controller_runtime_reconcile_time_seconds":
			for _, m := range f.GetMetric() {
				if label(m, "controller") == s.Controller {
					snap.ReconcileTime.add(m.GetHistogram())
				}
			}
		case "workqueue_queue_duration_seconds":
			for _, m := range f.GetMetric() {
				if label(m, "name") == s.Controller || label(m, "controller") == s.Controller {
					snap.QueueWait.add(m.GetHistogram())
				}
			}
		}
	}
	snap.CPUSeconds = cpuSeconds()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	snap.HeapAlloc, snap.HeapSys, snap.Sys = ms.HeapAlloc, ms.HeapSys, ms.Sys
	snap.RSS, snap.PeakRSS = procStatus("VmRSS"), procStatus("VmHWM")
	return snap, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// procStatus reads a "kB" field of /proc/self/status in bytes; 0 when absent.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) == 0 {
			return 0
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb * 1024
	}
	return 0
}

// ServeHTTP answers GET /snapshot with the Snapshot as JSON.
func (s *Source) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/snapshot" {
		http.NotFound(w, r)
		return
	}
	snap, err := s.Snapshot()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(snap)
}

// Fetch reads a Snapshot from a Source served at addr (host:port).
func Fetch(ctx context.Context, addr string) (Snapshot, error) {
	var snap Snapshot
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/snapshot", nil)
	if err != nil {
		return snap, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return snap, fmt.Errorf("fetch operator snapshot: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return snap, fmt.Errorf("fetch operator snapshot: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		return snap, fmt.Errorf("decode operator snapshot: %w", err)
	}
	return snap, nil
}

// Sub returns the requests, reconciles, CPU time and histogram samples
// between before and s (the memory figures are s's own).
func (s Snapshot) Sub(before Snapshot) Snapshot {
	out := s
	out.Requests = map[string]int64{}
	for k, v := range s.Requests {
		if d := v - before.Requests[k]; d != 0 {
			out.Requests[k] = d
		}
	}
	out.NamespaceRequests = map[string]int64{}
	for k, v := range s.NamespaceRequests {
		if d := v - before.NamespaceRequests[k]; d != 0 {
			out.NamespaceRequests[k] = d
		}
	}
	out.Reconciles = map[string]int64{}
	for k, v := range s.Reconciles {
		if d := v - before.Reconciles[k]; d != 0 {
			out.Reconciles[k] = d
		}
	}
	out.CPUSeconds -= before.CPUSeconds
	out.Handoff = s.Handoff.Sub(before.Handoff)
	out.ReconcileTime = s.ReconcileTime.Sub(before.ReconcileTime)
	out.QueueWait = s.QueueWait.Sub(before.QueueWait)
	return out
}

// Hist is a Prometheus histogram's state: Cum[i] samples were ≤ Bounds[i].
type Hist struct {
	Count  uint64    `json:"count"`
	Sum    float64   `json:"sum"`
	Bounds []float64 `json:"bounds,omitempty"`
	Cum    []uint64  `json:"cum,omitempty"`
}

func (h *Hist) add(m *dto.Histogram) {
	if m == nil {
		return
	}
	h.Count += m.GetSampleCount()
	h.Sum += m.GetSampleSum()
	bs := m.GetBucket()
	if len(h.Bounds) == 0 {
		for _, b := range bs {
			h.Bounds = append(h.Bounds, b.GetUpperBound())
			h.Cum = append(h.Cum, 0)
		}
	}
	for i, b := range bs {
		if i < len(h.Cum) {
			h.Cum[i] += b.GetCumulativeCount()
		}
	}
}

// Sub returns the samples added since before (same buckets).
func (h Hist) Sub(before Hist) Hist {
	out := Hist{Count: h.Count - before.Count, Sum: h.Sum - before.Sum, Bounds: h.Bounds}
	out.Cum = make([]uint64, len(h.Cum))
	for i := range h.Cum {
		out.Cum[i] = h.Cum[i]
		if i < len(before.Cum) {
			out.Cum[i] -= before.Cum[i]
		}
	}
	return out
}

// Mean is Sum/Count, 0 without samples.
func (h Hist) Mean() float64 {
	if h.Count == 0 {
		return 0
	}
	return h.Sum / float64(h.Count)
}

// Quantile returns the upper bound of the bucket holding quantile q: an
// upper estimate, as coarse as the buckets; +Inf beyond the last bound.
func (h Hist) Quantile(q float64) float64 {
	if h.Count == 0 {
		return 0
	}
	want := q * float64(h.Count)
	for i, c := range h.Cum {
		if float64(c) >= want {
			return h.Bounds[i]
		}
	}
	return math.Inf(1)
}
