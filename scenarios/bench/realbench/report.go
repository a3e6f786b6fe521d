package realbench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is everything make bench measured; bench.json is its JSON.
type Result struct {
	Started time.Time      `json:"started"`
	Config  Config         `json:"config"`
	Machine Machine        `json:"machine"`
	Latency *LatencyResult `json:"latency,omitempty"`
	Scale   *ScaleResult   `json:"scale,omitempty"`
	// Load is the load phase's one row: Config.LoadUpgrades upgrades at
	// once among Config.LoadFillers churned Deployments.
	Load    *ScaleRow     `json:"load,omitempty"`
	Sim     *SimResult    `json:"sim,omitempty"`
	Targets []TargetCheck `json:"targets"`
}

// TargetCheck is one target of issue 9: a figure, not a test.
type TargetCheck struct {
	Target   string `json:"target"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

// Targets of issue 9.
const (
	TargetHandoffP99   = 0.100 // seconds
	TargetOverheadPct  = 1.0
	TargetSimRunsPerS  = 500.0
	TargetScaleDiffPct = 10.0
	simBenchmark       = "BenchmarkDemoRun"
)

// CheckTargets fills r.Targets from the figures present.
func (r *Result) CheckTargets() {
	r.Targets = nil
	if l := r.Latency; l != nil {
		g, ok := l.Group(DriverOperator, false)
		if !ok {
			g, ok = l.Group(DriverOperator, true)
		}
		if ok {
			p99 := g.Handoff.P99
			t := TargetCheck{Target: "handoff p99 ≤ 100 ms", Met: p99 <= TargetHandoffP99,
				Measured: fmt.Sprintf("p99 %s over %d operator upgrades, %s", ms(p99), g.Handoff.N, g.Timing)}
			if !t.Met {
				t.Measured += fmt.Sprintf("; missed by %s", ms(p99-TargetHandoffP99))
			}
			r.Targets = append(r.Targets, t)
		}
		if o, ok := l.Overhead(DriverOperator); ok {
			// Judged on the larger of the direct figure (noisy: rollouts of
			// ~25 s vary by tenths of seconds on shared cores) and the
			// components (start latency + handoff), which are precise.
			worst := max(o.Percent, o.ComponentsPercent)
			t := TargetCheck{Target: "ordering overhead ≤ 1 % of the total", Met: worst <= TargetOverheadPct,
				Measured: fmt.Sprintf("direct %+.2f %% (%+.3f s of %.2f s, standard error %.2f %%); start latency + handoff %+.2f %% (%.3f s)",
					o.Percent, o.Seconds, o.Total.Mean, 100*o.Paired.SD/math.Sqrt(float64(max(1, o.Paired.N)))/o.Total.Mean, o.ComponentsPercent, o.Components)}
			if !t.Met {
				t.Measured += fmt.Sprintf("; missed by %.2f points", worst-TargetOverheadPct)
			}
			r.Targets = append(r.Targets, t)
		}
	}
	if l := r.Load; l != nil && l.Handoff.N > 0 {
		t := TargetCheck{Target: fmt.Sprintf("handoff p99 ≤ 100 ms with %d upgrades at once and churn", l.Upgrades), Met: l.Handoff.P99 <= TargetHandoffP99,
			Measured: fmt.Sprintf("p99 %s (p50 %s) over %d upgrades", ms(l.Handoff.P99), ms(l.Handoff.P50), l.Handoff.N)}
		if !t.Met {
			t.Measured += fmt.Sprintf("; missed by %s", ms(l.Handoff.P99-TargetHandoffP99))
		}
		r.Targets = append(r.Targets, t)
	}
	if r.Sim != nil {
		if b, ok := r.Sim.Bench(simBenchmark, 1); ok {
			// Per core = per CPU-second where measured: other work on the
			// shared cores stretches wall time, not (much) CPU time.
			perCore, unit := b.RunsPerCPUSec, "runs per CPU-second"
			if perCore == 0 {
				perCore, unit = b.RunsPerSec, "runs/s"
			}
			t := TargetCheck{Target: "≥ 500 simulated demo runs/s per core", Met: perCore >= TargetSimRunsPerS,
				Measured: fmt.Sprintf("%.1f %s (%s -cpu 1; %.1f runs/s of wall time)", perCore, unit, simBenchmark, b.RunsPerSec)}
			if !t.Met && perCore > 0 {
				t.Measured += fmt.Sprintf("; missed: %.0f× too slow", TargetSimRunsPerS/perCore)
			}
			r.Targets = append(r.Targets, t)
		}
	}
	if s := r.Scale; s != nil && len(r.Config.Sizes) > 1 {
		lo, hi := slices.Min(r.Config.Sizes), slices.Max(r.Config.Sizes)
		// Baseline: the mean of every row at the smallest size. With no
		// unrelated Deployments the scope changes nothing that is counted,
		// and single rows of identical configurations differ by ±4 %
		// (rollout timing on shared cores decides how many intermediate
		// states, hence status patches and reconciles, an upgrade goes through).
		var baseRec, baseReq []float64
		for _, row := range s.Rows {
			if row.Fillers == lo {
				baseRec, baseReq = append(baseRec, row.Reconciles), append(baseReq, row.Requests)
			}
		}
		rec0, req0 := Summarize(baseRec), Summarize(baseReq)
		var parts []string
		met, any := true, false
		for _, scope := range r.Config.Scopes {
			b, ok := s.Row(hi, scope)
			if !ok || rec0.N == 0 {
				continue
			}
			any = true
			dr := relChange(rec0.Mean, b.Reconciles)
			dq := relChange(req0.Mean, b.Requests)
			met = met && math.Abs(dr) <= TargetScaleDiffPct && math.Abs(dq) <= TargetScaleDiffPct
			single := ""
			if a, ok := s.Row(lo, scope); ok {
				single = fmt.Sprintf(" [against the same scope's row alone: %+.0f %%, %+.0f %%]", relChange(a.Reconciles, b.Reconciles), relChange(a.Requests, b.Requests))
			}
			parts = append(parts, fmt.Sprintf("%s: reconciles %.1f (%+.0f %%), requests %.1f (%+.0f %%)%s", scope, b.Reconciles, dr, b.Requests, dq, single))
		}
		if any {
			r.Targets = append(r.Targets, TargetCheck{
				Target: fmt.Sprintf("reconciles and requests per upgrade at %s unrelated Deployments within 10 %% of %s (means of %d upgrades per row)",
					thousands(hi), thousands(lo), r.Config.ScaleUpgrades),
				Measured: fmt.Sprintf("at %s (mean of its %d rows, row sd %.1f %% and %.1f %%): reconciles %.1f, requests %.1f; at %s — %s",
					thousands(lo), rec0.N, 100*rec0.SD/rec0.Mean, 100*req0.SD/req0.Mean, rec0.Mean, req0.Mean, thousands(hi), strings.Join(parts, "; ")),
				Met: met})
		}
	}
}

// WriteTable prints the one table of make bench.
func (r *Result) WriteTable(out io.Writer) {
	m := r.Machine
	fmt.Fprintf(out, "make bench — %s — %d cores (%s), %s\n", r.Started.Format("2006-01-02 15:04 MST"), m.Cores, m.CPU, m.GoVersion)
	fmt.Fprintf(out, "load average (1 min) over the %.0f s run: mean %.2f, max %.2f (start %.2f, end %.2f); other worktrees' Go builds running in %d of %d samples (up to %d processes at once)\n",
		m.Seconds, m.LoadMean, m.LoadMax, m.LoadStart, m.LoadEnd, m.ForeignBuildSamples, m.Samples, m.ForeignBuildMax)
	if l := r.Latency; l != nil {
		fmt.Fprintf(out, "\n1–3. Real control plane (kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kwok on 127.0.0.1), %d upgrades side by side, one started every %s.\n", len(l.Cases), l.Stagger)
		fmt.Fprintln(out, "     handoff = API image write − last old worker pod deleted (watch events in resourceVersion order; negative = written while old worker pods existed)")
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "driver\tpod timings\tn\thandoff p50\tp99\tmax\told worker pods at API write\ttotal mean\tstart→worker write\tCompleted after")
		for _, g := range l.Groups {
			if g.Driver == DriverAlone {
				fmt.Fprintf(tw, "%s\t%s\t%d\t–\t–\t–\t–\tworker %s, API %s\t–\t–\n", driverName(g.Driver), g.Timing, g.N, sec(g.WorkerRollout.Mean), sec(g.APIRollout.Mean))
				continue
			}
			comp := "–"
			if g.CompletedAfter.N > 0 {
				comp = ms(g.CompletedAfter.P50) + " p50"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%d in %d/%d upgrades\t%s\t%s p50\t%s\n", driverName(g.Driver), g.Timing, g.N,
				dur(g.Handoff.P50), dur(g.Handoff.P99), dur(g.Handoff.Max), g.OldPodsAtAPIWrite, g.ViolatingUpgrades, g.N,
				sec(g.Total.Mean), ms(g.StartLatency.P50), comp)
		}
		tw.Flush()
		if len(l.Overheads) > 0 {
			fmt.Fprintf(out, "     ordering overhead, %s: total − (worker alone + API alone; the no-ordering twins wrote the same images at the operator's moments: %s + %s = %s)\n",
				fixedName(l.FixedTiming), sec(l.AloneWorker.Mean), sec(l.AloneAPI.Mean), sec(l.AloneWorker.Mean+l.AloneAPI.Mean))
			for _, o := range l.Overheads {
				how := "from the means"
				if o.Paired.N > 0 {
					how = fmt.Sprintf("over %d pairs with their twins: sd %.3f s, standard error %.3f s", o.Paired.N, o.Paired.SD, o.Paired.SD/math.Sqrt(float64(o.Paired.N)))
				}
				note := ""
				if o.Seconds < 0 {
					note = "; negative: the API rollout overlapped the old worker pods' termination"
				}
				fmt.Fprintf(out, "       %-10s total %s (n=%d, sd %s): overhead %+.3f s = %+.2f %% (%s%s)\n",
					driverName(o.Driver), sec(o.Total.Mean), o.Total.N, sec(o.Total.SD), o.Seconds, o.Percent, how, note)
				if o.Driver == DriverOperator {
					fmt.Fprintf(out, "       %-10s by its parts: start → worker write %s + handoff %s = %.3f s = %+.2f %%\n", "",
						ms(o.Components-handoffMean(l, o.Driver)), ms(handoffMean(l, o.Driver)), o.Components, o.ComponentsPercent)
				}
			}
		}
		for _, g := range l.Groups {
			if g.Driver == DriverOperator && g.StatusLag.N > 0 {
				fmt.Fprintf(out, "     operator handoff, %s, in two parts: pod gone → worker Deployment status done (controller-manager) p50 %s, p99 %s; that status → API write (operator) p50 %s, p99 %s\n",
					g.Timing, dur(g.StatusLag.P50), dur(g.StatusLag.P99), dur(g.Reaction.P50), dur(g.Reaction.P99))
			}
		}
		if g, ok := l.Group(DriverPoller, false); ok && g.PollerSawWorkerDone.N > 0 {
			fmt.Fprintf(out, "     the poller's checks said \"worker done\" %s (p50) before the last old worker pod was gone\n", sec(-g.PollerSawWorkerDone.P50))
		}
		if o := l.Operator; o.Reconciles > 0 {
			fmt.Fprintf(out, "     operator over the %.0f s of upgrades: %d reconciles (%d returned an error and were retried), %s mean (p99 ≤ %s), worker busy %.0f %%, mean wait in the workqueue %s\n",
				o.Seconds, o.Reconciles, o.ReconcileErrors, ms(o.ReconcileMean), ms(o.ReconcileP99), 100*o.Busy, ms(o.QueueWaitMean))
			if o.HandoffMetricCount > 0 {
				fmt.Fprintf(out, "     its own upgrade_operator_applicationupgrade_handoff_seconds: %d samples, mean %s (measured from status.phaseStartTime, a whole-second timestamp)\n",
					o.HandoffMetricCount, ms(o.HandoffMetricMean))
			}
		}
	}
	if s := r.Sim; s != nil && len(s.Benchmarks) > 0 {
		fmt.Fprintf(out, "\n4. Simulator: one demo upgrade per op, build → Completed (go test -bench, raw output in %s, medians)\n", s.File)
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "benchmark\tGOMAXPROCS\tn\truns/s (wall)\truns/CPU-s\tvirtual:wall\tms/run (wall)\tallocs/run\tMB allocated/run")
		for _, b := range s.Benchmarks {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t%.0f\t%.1f\t%.0f\t%.1f\n", b.Name, b.Procs, b.Samples, b.RunsPerSec,
				b.RunsPerCPUSec, b.VirtualWall, b.NsPerOp/1e6, b.AllocsPerOp, b.BytesPerOp/1e6)
		}
		tw.Flush()
	}
	if s := r.Scale; s != nil && len(s.Rows) > 0 {
		fmt.Fprintf(out, "\n5. Cost versus cluster size: each row a fresh operator process and %d upgrades side by side, %s; %.0f updates/s to unrelated Deployments meanwhile\n",
			r.Config.ScaleUpgrades, fixedName(s.Timing), r.Config.ChurnRate)
		fmt.Fprintln(out, "     reconciles and requests (watches excluded) per upgrade, and the operator's CPU time, over: upgrades created → 1 s after the last Completed;")
		fmt.Fprintln(out, "     upgrade s: mean creation → last old API pod gone; heap: live after GC at the end; startup: requests until quiet")
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "unrelated\tscope\tcached\treconciles\trequests (sd)\twatches\tchurn\tCPU\tupgrade s\tstartup req\tsync\theap\tRSS\tpeak RSS\thandoff p50")
		for _, row := range s.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%.1f (%.1f)\t%d\t%d\t%s\t%.1f\t%d\t%s\t%s\t%s\t%s\t%s\n", thousands(row.Fillers), scopeName(row), thousands(row.WatchedFillers),
				row.Reconciles, row.Requests, row.PerUpgradeRequests.SD, row.Watches, row.ChurnUpdates, cpu(row.CPUSeconds), row.Total.Mean, row.StartupRequests, sec(row.SyncSeconds),
				mb(int64(row.HeapBytes)), mb(row.RSS), mb(row.PeakRSS), dur(row.Handoff.P50))
		}
		tw.Flush()
	}
	if l := r.Load; l != nil {
		fmt.Fprintf(out, "\n6. Under load: %d upgrades created at once (%s) among %s unrelated Deployments updated %.0f times/s; one operator, cluster-wide\n",
			l.Upgrades, fixedName(r.Config.ScaleTiming), thousands(l.Fillers), l.ChurnRate)
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "handoff p50\tp99\tmax\tmin\treconciles/upgrade\trequests/upgrade\tchurn\tCPU\tupgrade s")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%.1f\t%d\t%s\t%.1f\n", dur(l.Handoff.P50), dur(l.Handoff.P99), dur(l.Handoff.Max), dur(l.Handoff.Min),
			l.Reconciles, l.Requests, l.ChurnUpdates, cpu(l.CPUSeconds), l.Total.Mean)
		tw.Flush()
		if p := l.HandoffParts; p != nil && p.Decision.N > 0 {
			fmt.Fprintf(out, "     handoff in three parts (operator log's send times): last old worker pod gone → status patch recording api Upgrading sent p50 %s, p99 %s; → API image write sent (that patch's round trip, the optimistic lock the write waits for) p50 %s, p99 %s; → write seen by the driver p50 %s, p99 %s\n",
				ms(p.Decision.P50), ms(p.Decision.P99), ms(p.Fence.P50), ms(p.Fence.P99), ms(p.Write.P50), ms(p.Write.P99))
		}
	}
	if len(r.Targets) > 0 {
		fmt.Fprintln(out, "\nTargets (figures, not tests)")
		for _, t := range r.Targets {
			v := "MISSED"
			if t.Met {
				v = "met   "
			}
			fmt.Fprintf(out, "  [%s] %s — %s\n", v, t.Target, t.Measured)
		}
	}
}

// se is the standard error of s's mean.
func se(s Stats) float64 {
	if s.N == 0 {
		return math.NaN()
	}
	return s.SD / math.Sqrt(float64(s.N))
}

func handoffMean(l *LatencyResult, driver string) float64 {
	g, _ := l.Group(driver, true)
	return g.Handoff.Mean
}

func driverName(d string) string {
	switch d {
	case DriverPoller:
		return "poller 2 s"
	case DriverAlone:
		return "no ordering"
	}
	return d
}

func scopeName(r ScaleRow) string {
	switch r.Scope {
	case "all":
		return "cluster-wide"
	case "listed":
		return fmt.Sprintf("%d namespaces listed", r.WatchNamespaces)
	case "own":
		return "own namespace only"
	}
	return r.Scope
}

func fixedName(t Timing) string {
	return fmt.Sprintf("fixed pod timings (create %s, ready %s, delete %s)", t.Create, t.Ready, t.Delete)
}

// dur prints seconds as ms below 1 s, else as s; "–" for NaN.
func dur(s float64) string {
	if math.IsNaN(s) {
		return "–"
	}
	if math.Abs(s) < 1 {
		return ms(s)
	}
	return sec(s)
}

func cpu(s float64) string {
	if s <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f s", s)
}

func ms(s float64) string {
	if math.IsNaN(s) {
		return "–"
	}
	return fmt.Sprintf("%.0f ms", s*1000)
}

func sec(s float64) string {
	if math.IsNaN(s) {
		return "–"
	}
	return fmt.Sprintf("%.2f s", s)
}

func mb(b int64) string {
	if b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
