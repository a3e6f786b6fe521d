package e2e

import (
	"fmt"
	"strings"
	"time"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Case is one situation of shared/cases/public-cases.md on a real cluster.
type Case struct {
	ID, Title   string
	Worker, API Shape
	// BadWorker: the upgrade's worker image cannot be pulled (Images.Bad).
	BadWorker bool
	// ScaleFromZero: the worker starts at 0 replicas, already at the
	// upgrade's worker image, and is scaled to Worker.Replicas just before
	// the upgrade is created (the Deployment controller's scaling path
	// never sets ProgressDeadlineExceeded).
	ScaleFromZero bool
	WantPhase     upgradesv1alpha1.Phase
	// WantMessage returns substrings of the final status message.
	WantMessage func(r *Result) []string
	// Timeout bounds the upgrade, from its creation.
	Timeout time.Duration
	// Check returns the case's own failures, judged from the event log and trace.
	Check func(r *Result) []error
}

// Namespace is the case's namespace: e2e-<id>.
func (c Case) Namespace() string { return "e2e-" + strings.ToLower(c.ID) }

var defaultAPI = Shape{Replicas: 1, Grace: 30, Timing: Timing{Create: time.Second, Ready: time.Second, Delete: 2 * time.Second}}

// Cases are C01–C07 of shared/cases/public-cases.md with the variants of
// issue 3: 3-replica workers, maxSurge 1 / maxUnavailable 0 and maxSurge 0 /
// maxUnavailable 1, Recreate, termination longer than start-up, a bad image.
func Cases() []Case {
	return []Case{
		{
			ID: "C01", Title: "old worker pod takes its whole 60 s grace period to exit",
			Worker: Shape{Replicas: 1, Grace: 60, Timing: Timing{Create: time.Second, Ready: time.Second, Delete: 60 * time.Second}},
			API:    defaultAPI, WantPhase: upgradesv1alpha1.PhaseCompleted, Timeout: 4 * time.Minute,
			Check: checkCountersCompleteWhileTerminating(45),
		},
		{
			ID: "C02", Title: "3 replicas, maxSurge 1 / maxUnavailable 0, ready after 5 s, grace 20 s",
			Worker: Shape{Replicas: 3, Strategy: RollingUpdate(1, 0), Grace: 20,
				Timing: Timing{Create: time.Second, Ready: 4 * time.Second, Delete: 20 * time.Second}},
			API:       Shape{Replicas: 3, Strategy: RollingUpdate(1, 0), Grace: 10, Timing: Timing{Create: time.Second, Ready: time.Second, Delete: 3 * time.Second}},
			WantPhase: upgradesv1alpha1.PhaseCompleted, Timeout: 4 * time.Minute,
			Check: checkHandoffBelow(3),
		},
		{
			ID: "C03", Title: "stale status right after the worker patch (generation unobserved), maxSurge 0 / maxUnavailable 1",
			Worker: Shape{Replicas: 3, Strategy: RollingUpdate(0, 1), Grace: 30,
				Timing: Timing{Create: time.Second, Ready: 2 * time.Second, Delete: 6 * time.Second}},
			API: defaultAPI, WantPhase: upgradesv1alpha1.PhaseCompleted, Timeout: 4 * time.Minute,
			Check: checkStaleStatusHeld,
		},
		{
			ID: "C04", Title: "updated=1, available=3, replicas=3: old pods still serving",
			Worker: Shape{Replicas: 3, Strategy: RollingUpdate(1, 0), Grace: 30,
				Timing: Timing{Create: time.Second, Ready: 2 * time.Second, Delete: 8 * time.Second}},
			API: defaultAPI, WantPhase: upgradesv1alpha1.PhaseCompleted, Timeout: 4 * time.Minute,
			Check: checkPartialRolloutHeld,
		},
		{
			ID: "C05", Title: "Recreate strategy, 2 replicas",
			Worker: Shape{Replicas: 2, Strategy: Recreate, Grace: 30,
				Timing: Timing{Create: time.Second, Ready: 2 * time.Second, Delete: 5 * time.Second}},
			API: defaultAPI, WantPhase: upgradesv1alpha1.PhaseCompleted, Timeout: 4 * time.Minute,
			Check: checkRecreateOrder,
		},
		{
			ID: "C06", Title: "worker image cannot be pulled, progressDeadlineSeconds 30",
			Worker: Shape{Replicas: 3, Strategy: RollingUpdate(1, 0), Grace: 30, ProgressDeadline: 30,
				Timing: Timing{Create: time.Second, Ready: 2 * time.Second, Delete: 2 * time.Second}},
			API: defaultAPI, BadWorker: true, WantPhase: upgradesv1alpha1.PhaseFailed, Timeout: 2 * time.Minute,
			WantMessage: failedWorkerMessage, Check: checkFailedWithin(15),
		},
		{
			ID: "C07", Title: "worker scaled from 0 to 2 with a bad image",
			Worker: Shape{Replicas: 2, Strategy: RollingUpdate(1, 0), Grace: 30, ProgressDeadline: 30,
				Timing: Timing{Create: time.Second, Ready: 2 * time.Second, Delete: 2 * time.Second}},
			API: defaultAPI, BadWorker: true, ScaleFromZero: true, WantPhase: upgradesv1alpha1.PhaseFailed, Timeout: 2 * time.Minute,
			WantMessage: failedWorkerMessage, Check: checkPullErrorNamed,
		},
	}
}

// CaseByID returns the case with id, or false.
func CaseByID(id string) (Case, bool) {
	for _, c := range Cases() {
		if c.ID == id {
			return c, true
		}
	}
	return Case{}, false
}

func failedWorkerMessage(r *Result) []string {
	return []string{"worker: Rollout of " + r.Namespace + "/" + WorkerName + " failed", `container "worker"`}
}

func errorsf(format string, args ...any) []error { return []error{fmt.Errorf(format, args...)} }

// checkCountersCompleteWhileTerminating (C01): the worker's counters said
// complete for at least minSeconds while the old pod still existed.
func checkCountersCompleteWhileTerminating(minSeconds float64) func(r *Result) []error {
	return func(r *Result) []error {
		deleted := r.podEvents(eventlog.PodDeleted, true)
		if len(deleted) == 0 {
			return errorsf("no old worker pod deletion recorded")
		}
		last := deleted[len(deleted)-1]
		for _, e := range r.workerTrace() {
			if e.CountersComplete() {
				if window := last.T - e.T; window < minSeconds {
					return errorsf("counters complete only %.1f s before the last old worker pod was deleted, want >= %.0f s", window, minSeconds)
				}
				return nil
			}
		}
		return errorsf("worker counters never complete for generation >= 2")
	}
}

// checkHandoffBelow (C02): the API write follows the last old worker pod's
// deletion within max seconds (event-driven, no polling gap).
func checkHandoffBelow(max float64) func(r *Result) []error {
	return func(r *Result) []error {
		if h := r.Report.Handoff; h < 0 || h > max {
			return errorsf("handoff %.3f s, want within [0, %.0f] s", h, max)
		}
		return nil
	}
}

// checkStaleStatusHeld (C03): the worker was seen with its generation one
// ahead and the previous rollout's complete counters, and the upgrade was
// not past WaitingForWorkers at any such moment.
func checkStaleStatusHeld(r *Result) []error {
	seen := 0
	for _, e := range r.workerTrace() {
		if e.ObservedGeneration >= e.Generation || e.Updated != e.Spec || e.Replicas != e.Spec || e.Available != e.Spec {
			continue
		}
		seen++
		if p := r.phaseBefore(e.RV + 1); p == string(upgradesv1alpha1.PhaseUpgradingAPI) || p == string(upgradesv1alpha1.PhaseWaitingForAPI) {
			return errorsf("upgrade in %s while the worker's status was stale (gen %d, observed %d)", p, e.Generation, e.ObservedGeneration)
		}
	}
	if seen == 0 {
		return errorsf("the stale-status window (generation unobserved, counters complete) was never recorded")
	}
	return nil
}

// checkPartialRolloutHeld (C04): a status with the generation observed,
// 0 < updated < spec and available >= spec (old pods still serving, a new
// one up: updated=1, available=3, replicas=3 or 4 in the surge) was
// recorded, and the upgrade was in WaitingForWorkers at every such status.
func checkPartialRolloutHeld(r *Result) []error {
	seen := 0
	for _, e := range r.workerTrace() {
		if e.ObservedGeneration < e.Generation || e.Updated == 0 || e.Updated >= e.Spec || e.Available < e.Spec {
			continue
		}
		seen++
		if p := r.phaseBefore(e.RV + 1); p != string(upgradesv1alpha1.PhaseWaitingForWorkers) {
			return errorsf("upgrade in %q at updated=%d available=%d replicas=%d, want WaitingForWorkers", p, e.Updated, e.Available, e.Replicas)
		}
	}
	if seen == 0 {
		return errorsf("no status with 0 < updated < spec and available >= spec was recorded")
	}
	return nil
}

// checkRecreateOrder (C05): every old worker pod was gone before the first
// new one was created.
func checkRecreateOrder(r *Result) []error {
	created, deleted := r.podEvents(eventlog.PodCreated, false), r.podEvents(eventlog.PodDeleted, true)
	if len(created) == 0 || len(deleted) == 0 {
		return errorsf("recorded %d new worker pods created and %d old deleted", len(created), len(deleted))
	}
	if rvOf(created[0]) < rvOf(deleted[len(deleted)-1]) {
		return errorsf("new worker pod %s created before old pod %s was deleted", created[0].Name, deleted[len(deleted)-1].Name)
	}
	return nil
}

// checkFailedWithin (C06): Failed within max seconds of the worker write
// (per-pod classification, well before the progress deadline), naming the
// pull error.
func checkFailedWithin(max float64) func(r *Result) []error {
	return func(r *Result) []error {
		errs := checkPullErrorNamed(r)
		var wrote, failed float64 = -1, -1
		for _, e := range r.Events {
			switch {
			case e.Event == eventlog.DeploymentWrite && e.Name == WorkerName && e.Image == r.WorkerTarget && wrote < 0:
				wrote = e.T
			case e.Event == eventlog.Phase && e.Name == UpgradeName && e.Phase == string(upgradesv1alpha1.PhaseFailed) && failed < 0:
				failed = e.T
			}
		}
		if wrote < 0 || failed < 0 || failed-wrote > max {
			errs = append(errs, fmt.Errorf("worker written at t=%.1f s, Failed at t=%.1f s: want Failed within %.0f s", wrote, failed, max))
		}
		return errs
	}
}

// checkPullErrorNamed (C06, C07): the message names the pull error.
func checkPullErrorNamed(r *Result) []error {
	m := r.Upgrade.Status.Message
	if !strings.Contains(m, "ErrImagePull") && !strings.Contains(m, "ImagePullBackOff") {
		return errorsf("message %q names neither ErrImagePull nor ImagePullBackOff", m)
	}
	return nil
}
