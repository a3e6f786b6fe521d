package realbench

import (
	"math"
	"sort"
)

// CaseResult is one upgrade of the latency phase.
type CaseResult struct {
	Namespace string `json:"namespace"`
	Driver    string `json:"driver"`
	Timing    string `json:"timing"`
	Fixed     bool   `json:"fixed"`
	// Start is when the driver began (ApplicationUpgrade created, poller
	// started, images written), in seconds on the event log's clock.
	Start float64 `json:"start"`
	Moments
	// PollerWorkerDone and PollerAPIDone are when the poller's checks
	// first said done; -1 for other drivers.
	PollerWorkerDone float64 `json:"pollerWorkerDone"`
	PollerAPIDone    float64 `json:"pollerAPIDone"`
	// Twin is, for the no-ordering driver, the operator case whose image
	// writes it mirrored.
	Twin string `json:"twin,omitempty"`
	// WorkerStatusSettled: see StatusSettled.
	WorkerStatusSettled float64 `json:"workerStatusSettled"`
}

// Total is from the driver's start to the end of the API rollout (its last
// old pod gone), seconds.
func (c CaseResult) Total() float64 { return c.APIGone - c.Start }

// Group summarises the cases of one driver and timing.
type Group struct {
	Driver string `json:"driver"`
	Timing string `json:"timing"`
	Fixed  bool   `json:"fixed"`
	N      int    `json:"n"`
	// Handoff is APIWrite − WorkerGone: negative when the API image was
	// written while old worker pods still existed.
	Handoff Stats `json:"handoff"`
	// ViolatingUpgrades counts upgrades with at least one old worker pod
	// alive at the API write; OldPodsAtAPIWrite sums those pods.
	ViolatingUpgrades int `json:"violatingUpgrades"`
	OldPodsAtAPIWrite int `json:"oldPodsAtAPIWrite"`
	// Total is start → API rollout ended.
	Total Stats `json:"total"`
	// WorkerRollout and APIRollout are write → last old pod gone.
	WorkerRollout Stats `json:"workerRollout"`
	APIRollout    Stats `json:"apiRollout"`
	// StartLatency is start → worker image written.
	StartLatency Stats `json:"startLatency"`
	// CompletedAfter is API rollout ended → Completed phase (operator only).
	CompletedAfter Stats `json:"completedAfter"`
	// PollerSawWorkerDone is the poller's "worker done" − WorkerGone
	// (negative: it concluded while old worker pods still existed).
	PollerSawWorkerDone Stats `json:"pollerSawWorkerDone"`
	// The operator's handoff in two parts: StatusLag is the last old
	// worker pod's deletion → the worker Deployment's status showing the
	// rollout done (the controller-manager's ReplicaSet and Deployment
	// status updates); Reaction is that status → the API image write (the
	// operator: two reconciles and a status patch between them).
	StatusLag Stats `json:"statusLag"`
	Reaction  Stats `json:"reaction"`
}

// Overhead is the cost of ordering for one driver on the fixed timings:
// mean total − (mean worker rollout alone + mean API rollout alone).
//
// For the operator, whose every upgrade has a no-ordering twin that wrote
// the same images at the same moments, Paired holds the per-pair
// differences total − (twin's worker rollout + twin's API rollout): load
// that varies during the run then cancels out, and Seconds and Percent are
// their mean. Otherwise (the poller) they come from the means.
type Overhead struct {
	Driver   string  `json:"driver"`
	Total    Stats   `json:"total"`
	AloneSum float64 `json:"aloneSum"`
	Paired   Stats   `json:"paired"`
	Seconds  float64 `json:"seconds"`
	Percent  float64 `json:"percent"`
	// Unpaired is mean total − AloneSum, for comparison.
	Unpaired float64 `json:"unpaired"`
	// Components is what ordering adds by construction, free of the
	// rollouts' own noise: mean start → worker write + mean handoff, and
	// ComponentsPercent the same over the mean total.
	Components        float64 `json:"components"`
	ComponentsPercent float64 `json:"componentsPercent"`
}

// OperatorStats is the operator process over the latency phase, from its
// own metrics.
type OperatorStats struct {
	// Seconds is the length of the window (first upgrade started → last ended).
	Seconds    float64 `json:"seconds"`
	Reconciles int64   `json:"reconciles"`
	// ReconcileErrors returned an error (a Conflict on a stale read among
	// them) and were retried with the workqueue's backoff.
	ReconcileErrors int64 `json:"reconcileErrors"`
	// ReconcileMean and ReconcileP99 (bucket upper bound) are
	// controller_runtime_reconcile_time_seconds; Busy is its sum over
	// Seconds: the share of the time the (single) reconcile worker was busy.
	ReconcileMean float64 `json:"reconcileMean"`
	ReconcileP99  float64 `json:"reconcileP99"`
	Busy          float64 `json:"busy"`
	// QueueWaitMean is workqueue_queue_duration_seconds: how long a request
	// waited before a worker took it.
	QueueWaitMean float64 `json:"queueWaitMean"`
	// HandoffMetricCount and HandoffMetricMean are the operator's own
	// upgrade_operator_applicationupgrade_handoff_seconds.
	HandoffMetricCount uint64  `json:"handoffMetricCount"`
	HandoffMetricMean  float64 `json:"handoffMetricMean"`
}

// LatencyResult is the latency phase.
type LatencyResult struct {
	FixedTiming Timing        `json:"fixedTiming"`
	Stagger     string        `json:"stagger"`
	Groups      []Group       `json:"groups"`
	AloneWorker Stats         `json:"aloneWorker"`
	AloneAPI    Stats         `json:"aloneAPI"`
	Overheads   []Overhead    `json:"overheads"`
	Cases       []CaseResult  `json:"cases"`
	Operator    OperatorStats `json:"operator"`
}

// Group returns the group of driver with fixed timings or not.
func (l *LatencyResult) Group(driver string, fixed bool) (Group, bool) {
	for _, g := range l.Groups {
		if g.Driver == driver && g.Fixed == fixed {
			return g, true
		}
	}
	return Group{}, false
}

// Overhead returns driver's overhead.
func (l *LatencyResult) Overhead(driver string) (Overhead, bool) {
	for _, o := range l.Overheads {
		if o.Driver == driver {
			return o, true
		}
	}
	return Overhead{}, false
}

var driverOrder = map[string]int{DriverOperator: 0, DriverPoller: 1, DriverAlone: 2}

func summarizeLatency(cases []CaseResult, cfg Config) *LatencyResult {
	res := &LatencyResult{FixedTiming: cfg.FixedTiming, Stagger: cfg.Stagger.String(), Cases: cases}
	type key struct {
		driver string
		fixed  bool
	}
	by := map[key][]CaseResult{}
	var keys []key
	for _, c := range cases {
		k := key{c.Driver, c.Fixed}
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], c)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].fixed != keys[j].fixed {
			return !keys[i].fixed
		}
		return driverOrder[keys[i].driver] < driverOrder[keys[j].driver]
	})
	for _, k := range keys {
		cs := by[k]
		g := Group{Driver: k.driver, Timing: cs[0].Timing, Fixed: k.fixed, N: len(cs)}
		var handoff, total, wr, ar, start, completed, saw, lag, react []float64
		for _, c := range cs {
			if c.Driver != DriverAlone {
				handoff = append(handoff, c.Handoff())
				total = append(total, c.Total())
				start = append(start, c.WorkerWrite-c.Start)
				if c.OldWorkerPodsAtAPIWrite > 0 {
					g.ViolatingUpgrades++
					g.OldPodsAtAPIWrite += c.OldWorkerPodsAtAPIWrite
				}
			}
			wr = append(wr, c.WorkerGone-c.WorkerWrite)
			ar = append(ar, c.APIGone-c.APIWrite)
			if c.Completed >= 0 {
				completed = append(completed, c.Completed-c.APIGone)
			}
			if c.Driver == DriverOperator && c.WorkerStatusSettled >= 0 && c.WorkerGone >= 0 {
				lag = append(lag, c.WorkerStatusSettled-c.WorkerGone)
				react = append(react, c.APIWrite-c.WorkerStatusSettled)
			}
			if c.PollerWorkerDone >= 0 {
				saw = append(saw, c.PollerWorkerDone-c.WorkerGone)
			}
		}
		g.Handoff, g.Total, g.WorkerRollout, g.APIRollout = Summarize(handoff), Summarize(total), Summarize(wr), Summarize(ar)
		g.StartLatency, g.CompletedAfter, g.PollerSawWorkerDone = Summarize(start), Summarize(completed), Summarize(saw)
		g.StatusLag, g.Reaction = Summarize(lag), Summarize(react)
		res.Groups = append(res.Groups, g)
	}
	if alone, ok := res.Group(DriverAlone, true); ok {
		res.AloneWorker, res.AloneAPI = alone.WorkerRollout, alone.APIRollout
		sum := alone.WorkerRollout.Mean + alone.APIRollout.Mean
		byNS := map[string]CaseResult{}
		for _, c := range cases {
			byNS[c.Namespace] = c
		}
		for _, d := range []string{DriverOperator, DriverPoller} {
			g, ok := res.Group(d, true)
			if !ok || g.Total.N == 0 {
				continue
			}
			o := Overhead{Driver: d, Total: g.Total, AloneSum: sum, Unpaired: g.Total.Mean - sum,
				Components: g.StartLatency.Mean + g.Handoff.Mean}
			o.ComponentsPercent = 100 * o.Components / g.Total.Mean
			var paired []float64
			for _, c := range cases {
				if twin, ok := byNS[c.Twin]; ok && c.Driver == DriverAlone && twin.Driver == d {
					paired = append(paired, twin.Total()-((c.WorkerGone-c.WorkerWrite)+(c.APIGone-c.APIWrite)))
				}
			}
			o.Paired = Summarize(paired)
			o.Seconds = o.Unpaired
			if o.Paired.N > 0 {
				o.Seconds = o.Paired.Mean
			}
			o.Percent = 100 * o.Seconds / g.Total.Mean
			res.Overheads = append(res.Overheads, o)
		}
	}
	return res
}

// ScaleRow is one operator run of the cost-versus-size phase.
type ScaleRow struct {
	// Fillers is the number of unrelated Deployments (0 replicas) in the cluster.
	Fillers int `json:"fillers"`
	// Scope is "all" (cluster-wide), "listed" (the upgrade's namespace and
	// every filler namespace listed in --watch-namespaces) or "own" (the
	// upgrade's namespace only: the fillers are not watched).
	Scope           string `json:"scope"`
	WatchNamespaces int    `json:"watchNamespaces"`
	// WatchedFillers is how many fillers the operator's caches hold.
	WatchedFillers int `json:"watchedFillers"`
	// Upgrades ran side by side in this row, each in a namespace of its own.
	Upgrades int `json:"upgrades"`
	// Reconciles per upgrade: the operator's reconciles from the upgrades'
	// creation to 1 s after the last Completed, divided by Upgrades.
	Reconciles float64 `json:"reconciles"`
	// ReconcileErrors over the row (not divided).
	ReconcileErrors int64 `json:"reconcileErrors"`
	// Requests per upgrade the operator made over the same window, watches
	// excluded, and the watches (re)opened then (not divided).
	Requests float64 `json:"requests"`
	// PerUpgradeRequests are each upgrade's own requests (those in its
	// namespace): their spread says how much of a difference between rows is noise.
	PerUpgradeRequests Stats            `json:"perUpgradeRequests"`
	Watches            int64            `json:"watches"`
	RequestsByKey      map[string]int64 `json:"requestsByKey"`
	StartupRequests    int64            `json:"startupRequests"`
	StartupByKey       map[string]int64 `json:"startupByKey"`
	// StartupRequests are those made before the upgrade, once quiet (no
	// request or reconcile for 1 s). SyncSeconds is process start → the
	// manager's cache reported synced.
	SyncSeconds float64 `json:"syncSeconds"`
	// CPUSeconds is the operator's CPU time over the upgrades' window
	// (unrelated events included), StartupCPUSeconds until quiet.
	CPUSeconds        float64 `json:"cpuSeconds"`
	StartupCPUSeconds float64 `json:"startupCPUSeconds"`
	// HeapBytes is the live heap after a forced GC at the end; RSS and
	// PeakRSS are VmRSS and VmHWM then.
	HeapBytes uint64 `json:"heapBytes"`
	RSS       int64  `json:"rss"`
	PeakRSS   int64  `json:"peakRSS"`
	// Handoff and Total are over the upgrades, seconds.
	Handoff Stats `json:"handoff"`
	Total   Stats `json:"total"`
	// HandoffParts splits Handoff with the operator's logged send times
	// (nil when its log could not be read).
	HandoffParts *HandoffParts `json:"handoffParts,omitempty"`
	// ChurnUpdates were made to fillers during the upgrade, at ChurnRate per second.
	ChurnUpdates int     `json:"churnUpdates"`
	ChurnRate    float64 `json:"churnRate"`
}

// ScaleResult is the cost-versus-size phase.
type ScaleResult struct {
	Timing Timing     `json:"timing"`
	Rows   []ScaleRow `json:"rows"`
	// FillerSeconds is how long creating each size took (until the
	// controller-manager had made every filler's ReplicaSet).
	FillerSeconds map[int]float64 `json:"fillerSeconds"`
}

// Row returns the row of fillers and scope.
func (s *ScaleResult) Row(fillers int, scope string) (ScaleRow, bool) {
	for _, r := range s.Rows {
		if r.Fillers == fillers && r.Scope == scope {
			return r, true
		}
	}
	return ScaleRow{}, false
}

// relChange is (b − a)/a in percent; NaN when a is 0.
func relChange(a, b float64) float64 {
	if a == 0 {
		return math.NaN()
	}
	return 100 * (b - a) / a
}
