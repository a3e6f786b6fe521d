package fidelity

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The crash-loop comparison (make fidelity REAL_NODE=1): one pod whose
// container exits 1 soon after each start (the ":crashloop" marker on the
// simulator, the demo image's crashloop tag on the real node), watched on
// both backends; restart counts over time, the waiting reason between
// runs and the delay the kubelet put before each restart.
//
// The real kubelet's rule (k8s.io/kubernetes v1.37.2):
// pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff asks
// flowcontrol.Backoff.IsInBackOffSince(key, finishedAt of the last exit):
// no entry yet (first exit) → restart at once and Next(key) sets 10 s;
// otherwise, while less than the entry's back-off has passed since the
// exit → CrashLoopBackOff with "back-off <d> restarting failed
// container=<c> pod=<name_namespace(uid)>", and after the restart Next
// doubles it (client-go util/flowcontrol/backoff.go Next; jitter 0:
// NewBackOff). Initial 10 s and cap 300 s: pkg/kubelet/kubelet.go
// newCrashLoopBackOff with initialCrashLoopBackOff and
// MaxCrashLoopBackOff (KubeletCrashLoopBackOffMax is on by default since
// 1.35 and takes the cap from crashLoopBackOff.maxContainerRestartPeriod,
// default 300 s; ReduceDefaultCrashLoopBackOffDecay, 1 s / 60 s, is alpha
// and off); the entry expires 600 s after its last update (the
// HasExpiredFunc NewMainKubelet sets).

// ContainerSample is one observed status of the crash-looping container.
// Times are seconds since the pod was created (the caller's clock); the
// kubelet's own timestamps (startedAt, finishedAt) are whole seconds on a
// real cluster (metav1.Time), so up to 1 s early.
type ContainerSample struct {
	At       float64
	Restarts int32
	// State is "running", "terminated" or "waiting".
	State string
	// Reason and Message: the waiting state's (CrashLoopBackOff,
	// ContainerCreating) or the terminated state's reason.
	Reason, Message string
	// Started and Finished are the current state's startedAt / finishedAt
	// (running: Started; terminated: both), nil when absent.
	Started, Finished *float64
	// LastStarted and LastFinished are lastState.terminated's.
	LastStarted, LastFinished *float64
	LastExitCode              int32
}

// SampleOf reads the status of container name of pod, observed at, with
// times relative to origin; ok is false when the pod has no status for it.
func SampleOf(pod *corev1.Pod, name string, origin, at time.Time) (ContainerSample, bool) {
	rel := func(t time.Time) *float64 {
		if t.IsZero() {
			return nil
		}
		v := t.Sub(origin).Seconds()
		return &v
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != name {
			continue
		}
		s := ContainerSample{At: at.Sub(origin).Seconds(), Restarts: cs.RestartCount}
		switch st := cs.State; {
		case st.Running != nil:
			s.State, s.Started = "running", rel(st.Running.StartedAt.Time)
		case st.Terminated != nil:
			s.State, s.Reason = "terminated", st.Terminated.Reason
			s.Started, s.Finished = rel(st.Terminated.StartedAt.Time), rel(st.Terminated.FinishedAt.Time)
		case st.Waiting != nil:
			s.State, s.Reason, s.Message = "waiting", st.Waiting.Reason, st.Waiting.Message
		default:
			s.State = "waiting"
		}
		if t := cs.LastTerminationState.Terminated; t != nil {
			s.LastStarted, s.LastFinished, s.LastExitCode = rel(t.StartedAt.Time), rel(t.FinishedAt.Time), t.ExitCode
		}
		return s, true
	}
	return ContainerSample{}, false
}

// Run is one run of the container: the run after N restarts. Times are
// when a status showed it (the kubelet's status writes; the real kubelet's
// own startedAt / finishedAt are whole seconds, too coarse for a 0.5 s
// run), so the real figures include the kubelet's status lag.
type Run struct {
	N int32
	// Started is when a status first showed the run (running, or already
	// terminated); Exited when one first showed it exited (NaN: never).
	Started, Exited float64
	// Delay is Started minus the previous run's Exited: the back-off the
	// kubelet put before this restart (NaN for run 0 or when unknown).
	Delay float64
	// Reasons are the waiting reasons seen between the previous run's exit
	// and this run's start, in order, without repeats.
	Reasons []string
	// ExitCode is the run's exit code (from lastState), -1 when unknown.
	ExitCode int32
}

// CrashLoop is what the samples of one crash-looping container show.
type CrashLoop struct {
	Runs []Run
	// FirstBackOff is when CrashLoopBackOff was first seen (NaN: never),
	// and BackOffMessages every distinct CrashLoopBackOff message.
	FirstBackOff    float64
	BackOffMessages []string
}

// DeriveCrashLoop rebuilds the runs from samples in observation order. The
// lastState of a status belongs to the run before the current one while
// the container runs or has just terminated, and to the current run
// (RestartCount N, just exited) while it waits in back-off: the kubelet
// counts a restart only when it starts the next container, and a
// container it will restart is shown Waiting with the exited one as
// lastState (pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses);
// the simulator's kubelet model reports the same (simulator/kubelet.go
// crashed).
func DeriveCrashLoop(samples []ContainerSample) CrashLoop {
	nan := math.NaN()
	runs := map[int32]*Run{}
	run := func(n int32) *Run {
		if r, ok := runs[n]; ok {
			return r
		}
		r := &Run{N: n, Started: nan, Exited: nan, Delay: nan, ExitCode: -1}
		runs[n] = r
		return r
	}
	first := func(dst *float64, at float64) {
		if math.IsNaN(*dst) {
			*dst = at
		}
	}
	out := CrashLoop{FirstBackOff: nan}
	for _, s := range samples {
		cur := run(s.Restarts)
		last := s.Restarts - 1
		switch s.State {
		case "running":
			first(&cur.Started, s.At)
		case "terminated":
			first(&cur.Started, s.At)
			first(&cur.Exited, s.At)
		case "waiting":
			// With a lastState, run N has exited and the reason is
			// about the next run; without one (ContainerCreating) it
			// is about run N itself.
			before := cur
			if s.LastFinished != nil {
				last, before = s.Restarts, run(s.Restarts+1)
			}
			if s.Reason != "" && (len(before.Reasons) == 0 || before.Reasons[len(before.Reasons)-1] != s.Reason) {
				before.Reasons = append(before.Reasons, s.Reason)
			}
			if s.Reason == "CrashLoopBackOff" {
				first(&out.FirstBackOff, s.At)
				if !contains(out.BackOffMessages, s.Message) {
					out.BackOffMessages = append(out.BackOffMessages, s.Message)
				}
			}
		}
		if last >= 0 && s.LastFinished != nil {
			prev := run(last)
			first(&prev.Started, s.At)
			first(&prev.Exited, s.At)
			prev.ExitCode = s.LastExitCode
		}
	}
	keys := make([]int32, 0, len(runs))
	for n := range runs {
		keys = append(keys, n)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, n := range keys {
		r := *runs[n]
		if prev, ok := runs[n-1]; ok {
			r.Delay = r.Started - prev.Exited
		}
		out.Runs = append(out.Runs, r)
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Verdict is how the operator ended the crash-loop scenario on one backend.
type Verdict struct {
	Phase   string
	Message string
	// After is seconds from the worker's image write to the phase.
	After float64
}

// CrashLoopComparison is both backends' crash loop and verdict.
type CrashLoopComparison struct {
	Sim, Real               CrashLoop
	SimVerdict, RealVerdict Verdict
}

// WriteCrashLoopReport prints the runs side by side (start, exit, delay
// before the restart and the waiting reasons between), the first
// CrashLoopBackOff, its messages, the operator's verdicts, and one line
// per difference with its figures.
func WriteCrashLoopReport(w io.Writer, c CrashLoopComparison) error {
	fmt.Fprintln(w, "\nCrash loop: the simulator's kubelet model vs the real kubelet (one pod, exit 1 after 0.5 s each run; times in s since the pod's creation)")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESTARTS\tSIM START\tREAL START\tSIM EXIT\tREAL EXIT\tSIM DELAY\tREAL DELAY\tSIM REASONS BEFORE\tREAL REASONS BEFORE")
	n := max(len(c.Sim.Runs), len(c.Real.Runs))
	for i := 0; i < n; i++ {
		s, r := runAt(c.Sim.Runs, i), runAt(c.Real.Runs, i)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i, f1(s.Started), f1(r.Started), f1(s.Exited), f1(r.Exited),
			f1(s.Delay), f1(r.Delay), strings.Join(s.Reasons, ","), strings.Join(r.Reasons, ","))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "first CrashLoopBackOff: sim %s s, real %s s\n", f1(c.Sim.FirstBackOff), f1(c.Real.FirstBackOff))
	fmt.Fprintf(w, "back-off messages:\n    sim:  %s\n    real: %s\n", strings.Join(c.Sim.BackOffMessages, " | "), strings.Join(c.Real.BackOffMessages, " | "))
	fmt.Fprintf(w, "operator verdict (the crash-loop feature):\n    sim:  %s after %s s: %s\n    real: %s after %s s: %s\n",
		c.SimVerdict.Phase, f1(c.SimVerdict.After), c.SimVerdict.Message, c.RealVerdict.Phase, f1(c.RealVerdict.After), c.RealVerdict.Message)
	for _, d := range CrashLoopDifferences(c) {
		fmt.Fprintln(w, "  differs: "+d)
	}
	return nil
}

// CrashLoopDifferences names, with figures, where the two backends'
// crash loops and verdicts differ: a restart delay more than 2 s apart
// (the real kubelet notices an exit on its next relist, ~1 s, and
// writes statuses with a lag of its own), a restart the other backend never reached,
// a different waiting reason before a restart, a first CrashLoopBackOff
// more than 2 s apart, and different verdict phases.
func CrashLoopDifferences(c CrashLoopComparison) []string {
	var out []string
	n := min(len(c.Sim.Runs), len(c.Real.Runs))
	for i := 1; i < n; i++ {
		s, r := c.Sim.Runs[i], c.Real.Runs[i]
		if d := r.Delay - s.Delay; math.Abs(d) > 2 {
			out = append(out, fmt.Sprintf("restart %d: delay sim %s s, real %s s (%+.1f s)", i, f1(s.Delay), f1(r.Delay), d))
		}
		if strings.Join(s.Reasons, ",") != strings.Join(r.Reasons, ",") {
			out = append(out, fmt.Sprintf("restart %d: waiting reasons before it sim [%s], real [%s]", i, strings.Join(s.Reasons, ","), strings.Join(r.Reasons, ",")))
		}
	}
	if len(c.Sim.Runs) != len(c.Real.Runs) {
		out = append(out, fmt.Sprintf("runs observed: sim %d, real %d", len(c.Sim.Runs), len(c.Real.Runs)))
	}
	if d := c.Real.FirstBackOff - c.Sim.FirstBackOff; math.Abs(d) > 2 || math.IsNaN(d) {
		out = append(out, fmt.Sprintf("first CrashLoopBackOff: sim %s s, real %s s", f1(c.Sim.FirstBackOff), f1(c.Real.FirstBackOff)))
	}
	if c.SimVerdict.Phase != c.RealVerdict.Phase {
		out = append(out, fmt.Sprintf("verdict: sim %s, real %s", c.SimVerdict.Phase, c.RealVerdict.Phase))
	}
	if d := c.RealVerdict.After - c.SimVerdict.After; math.Abs(d) > 2 {
		out = append(out, fmt.Sprintf("verdict after: sim %s s, real %s s (%+.1f s)", f1(c.SimVerdict.After), f1(c.RealVerdict.After), d))
	}
	return out
}

func runAt(runs []Run, i int) Run {
	if i < len(runs) {
		return runs[i]
	}
	nan := math.NaN()
	return Run{N: int32(i), Started: nan, Exited: nan, Delay: nan, ExitCode: -1}
}

func f1(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}
