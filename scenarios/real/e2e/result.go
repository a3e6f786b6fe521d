package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// Result is a finished case: the upgrade as it ended, the event log, the
// trace and the ordering report computed from the event log.
type Result struct {
	Case         Case
	Namespace    string
	Dir          string
	EventLog     string
	WorkerTarget string
	APITarget    string
	// Elapsed runs from creating the ApplicationUpgrade to its terminal phase.
	Elapsed time.Duration
	Upgrade upgradesv1alpha1.ApplicationUpgrade
	Events  []eventlog.Event
	Trace   []TraceEntry
	Report  judge.Report
	// Judged is the one judge's verdict (judge.Judge over Events and the
	// upgrade's graph: the porcupine model, the invariants, the ordering).
	Judged *judge.Result
}

// Verify returns every way the result falls short of the case: phase,
// message, ordering (no API image write while an old worker pod exists;
// the UpgradingAPI decision after the last old worker pod's deletion),
// write counts, and the case's own checks.
func (r *Result) Verify() []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	st := r.Upgrade.Status
	if st.Phase != r.Case.WantPhase {
		fail("upgrade %s/%s ended %q (%s), want %s", r.Namespace, UpgradeName, st.Phase, st.Message, r.Case.WantPhase)
	}
	if r.Case.WantMessage != nil {
		for _, part := range r.Case.WantMessage(r) {
			if !strings.Contains(st.Message, part) {
				fail("message %q lacks %q", st.Message, part)
			}
		}
	}
	if n := len(r.Report.Violations); n > 0 {
		fail("ordering violation (%d): %s", n, r.Report.Violations[0])
	}
	if r.Judged != nil {
		// artifacts beside the event log, their paths in the error
		if err := r.Judged.Failure(r.EventLog, "e2e", "case "+r.Case.ID); err != nil {
			errs = append(errs, err)
		}
	}
	switch r.Case.WantPhase {
	case upgradesv1alpha1.PhaseCompleted:
		if r.Report.APIWrites != 1 {
			fail("API image written %d times, want 1", r.Report.APIWrites)
		}
		if w := r.Report.WorkerWrites[r.WorkerTarget]; !r.Case.ScaleFromZero && w != 1 {
			fail("worker image %s written %d times, want 1", r.WorkerTarget, w)
		}
		if rv, ok := r.lastOldWorkerPodDeleted(); ok {
			if d, ok := r.phaseEvent(upgradesv1alpha1.PhaseUpgradingAPI); !ok || rvOf(d) <= rv {
				fail("phase UpgradingAPI (rv %s) not after the last old worker pod's deletion (rv %d)", d.RV, rv)
			}
		} else if !r.Case.ScaleFromZero {
			fail("no old worker pod deletion in the event log")
		}
	case upgradesv1alpha1.PhaseFailed:
		if r.Report.APIWrites != 0 {
			fail("API image written %d times on a failed upgrade", r.Report.APIWrites)
		}
	}
	if r.Case.Check != nil {
		errs = append(errs, r.Case.Check(r)...)
	}
	return errs
}

// Handoff describes the seconds from the last old worker pod's deletion to
// the API image write.
func (r *Result) Handoff() string {
	rep := r.Report
	if rep.Handoff < 0 {
		return "n/a (no API image write)"
	}
	return fmt.Sprintf("%.3f s (last old worker pod deleted at t=%.3f s, API image written at t=%.3f s)", rep.Handoff, rep.LastOldWorkerDeleted, rep.FirstAPIWrite)
}

func rvOf(e eventlog.Event) uint64 {
	rv, _ := strconv.ParseUint(e.RV, 10, 64)
	return rv
}

// phaseEvent is the first Phase event entering phase.
func (r *Result) phaseEvent(phase upgradesv1alpha1.Phase) (eventlog.Event, bool) {
	for _, e := range judge.Ordered(r.Events) {
		if e.Event == eventlog.Phase && e.Name == UpgradeName && e.Phase == string(phase) {
			return e, true
		}
	}
	return eventlog.Event{}, false
}

// phaseBefore is the upgrade's phase just before resourceVersion rv.
func (r *Result) phaseBefore(rv uint64) string {
	phase := ""
	for _, e := range judge.Ordered(r.Events) {
		if rvOf(e) >= rv {
			break
		}
		if e.Event == eventlog.Phase && e.Name == UpgradeName {
			phase = e.Phase
		}
	}
	return phase
}

// lastOldWorkerPodDeleted is the resourceVersion of the last deletion of an
// old worker pod: of a template hash the worker's template did not take from
// its rewrite on (eventlog.DeploymentState.OldHash).
func (r *Result) lastOldWorkerPodDeleted() (uint64, bool) {
	var last uint64
	for _, e := range r.podEvents(eventlog.PodDeleted, true) {
		last = max(last, rvOf(e))
	}
	return last, last > 0
}

// podEvents are the worker's pod events of kind, of old pods or of new
// ones, judged by pod-template-hash against the worker's final template
// history.
func (r *Result) podEvents(kind string, old bool) []eventlog.Event {
	worker := eventlog.Final(r.Events).Deployments[eventlog.Key(r.Namespace, WorkerName)]
	var out []eventlog.Event
	for _, e := range judge.Ordered(r.Events) {
		if e.Event == kind && e.Deployment == WorkerName && worker != nil && worker.OldHash(e.Hash) == old {
			out = append(out, e)
		}
	}
	return out
}

// workerTrace is the worker Deployment's trace from its first generation-2 entry on.
func (r *Result) workerTrace() []TraceEntry {
	var out []TraceEntry
	for _, e := range r.Trace {
		if e.Kind == "Deployment" && e.Name == WorkerName && e.Generation >= 2 {
			out = append(out, e)
		}
	}
	return out
}
