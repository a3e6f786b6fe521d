// The per-edge ordering checks (formerly package checks) are computed
// from an event log (scenarios/eventlog) alone, so they apply unchanged to
// the simulator and to a real cluster.

package judge

import (
	"cmp"
	"fmt"
	"strings"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Pair names the two workloads of an ordered upgrade: Worker, the
// callee (the dependency), and API, the caller (the dependent).
type Pair struct {
	// Namespace is the API's namespace, and the worker's unless
	// WorkerNamespace names another (a cross-namespace graph edge).
	Namespace       string
	Worker          string
	API             string
	WorkerNamespace string
	// WorkerKind and APIKind are the workloads' kinds: "" (or
	// "Deployment") for a Deployment, "StatefulSet", "DaemonSet".
	WorkerKind, APIKind string
}

// WorkerNS is the worker workload's namespace.
func (p Pair) WorkerNS() string { return cmp.Or(p.WorkerNamespace, p.Namespace) }

// Report is what Ordering found.
type Report struct {
	// Violations lists every API image write of the operator's made while an old worker pod
	// (eventlog.State.Old: of a template hash older than the worker's
	// rewrite) still existed, terminating or not; empty means the run is safe.
	Violations []string
	// APIWrites counts the API Deployment's template rewrites that changed an
	// image and may be the operator's (operatorsImage).
	APIWrites int
	// WorkerWrites counts the worker's template rewrites by the image written.
	WorkerWrites map[string]int
	// Handoff is seconds from the last old worker pod's deletion to the first
	// API write; negative when there was no such pair.
	Handoff float64
	// LastOldWorkerDeleted and FirstAPIWrite are the times (seconds) behind Handoff; -1 when absent.
	LastOldWorkerDeleted, FirstAPIWrite float64
}

// Ordered returns events in a global order (eventlog.Ordered).
func Ordered(events []eventlog.Event) []eventlog.Event { return eventlog.Ordered(events) }

// Ordering checks the product's safety property on one Pair: no API
// image write while an old worker pod exists — a pod whose
// pod-template-hash is none the worker's template took from its first
// rewrite on (eventlog.State.Old), whatever its containers' order. The
// first DeploymentWrite of each Deployment is its initial state, not a
// write by the operator; nor is a write whose image other field managers
// own (operatorsImage: a GitOps tool re-applying the API's previous image
// while a respec rolls the worker, simulate --seed 2742).
func Ordering(events []eventlog.Event, p Pair) Report {
	rep := Report{WorkerWrites: map[string]int{}, Handoff: -1, LastOldWorkerDeleted: -1, FirstAPIWrite: -1}
	worker, api := eventlog.WorkloadKey(p.WorkerKind, p.WorkerNS(), p.Worker), eventlog.WorkloadKey(p.APIKind, p.Namespace, p.API)
	workerKind := kindOf(p.WorkerKind)
	eventlog.Replay(events, func(s *eventlog.State) {
		e := s.Event
		switch {
		case e.Event == eventlog.DeploymentWrite && e.WorkloadKey() == worker && s.Deployments[worker].Rewrites > 0:
			if e.Image != "" {
				rep.WorkerWrites[e.Image]++
			}
		case s.Rewrite != nil && e.WorkloadKey() == api && e.Image != "" && operatorsImage(e.ImageOwner):
			rep.APIWrites++
			if rep.FirstAPIWrite < 0 {
				rep.FirstAPIWrite = e.T
			}
			for _, k := range s.OldWorkloadPods(workerKind, p.WorkerNS(), p.Worker) {
				old := s.Pods[k]
				rep.Violations = append(rep.Violations, fmt.Sprintf(
					"t=%.3fs: API image %s written while old worker pod %s (hash %s, %s) still exists%s",
					e.T, e.Image, old.Name, old.Hash, describeContainers(old.Containers), terminatingMark(old)))
			}
		case s.Gone != nil && s.Gone.Namespace == p.WorkerNS() && s.Gone.Deployment == p.Worker && s.Gone.Kind == workerKind &&
			rep.FirstAPIWrite < 0 && s.Old(s.Gone):
			rep.LastOldWorkerDeleted = e.T
		}
	})
	if rep.FirstAPIWrite >= 0 && rep.LastOldWorkerDeleted >= 0 {
		rep.Handoff = rep.FirstAPIWrite - rep.LastOldWorkerDeleted
	}
	return rep
}

// describeContainers is "worker=img:v1" or "proxy=envoy:1, worker=img:v1".
func describeContainers(cs []eventlog.Container) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Name + "=" + c.Image
	}
	return strings.Join(parts, ", ")
}

func terminatingMark(p *eventlog.PodState) string {
	if p.Deleting {
		return " (terminating)"
	}
	return ""
}

// Verdict is the pass/fail of a run: an ordering violation first, then any
// upgrade not Completed. reports are keyed by namespace/name.
func Verdict(upgrades []upgradesv1alpha1.ApplicationUpgrade, reports map[string]Report) error {
	for _, u := range upgrades {
		if v := reports[u.Namespace+"/"+u.Name].Violations; len(v) > 0 {
			return fmt.Errorf("ordering violation in %s/%s: %s", u.Namespace, u.Name, v[0])
		}
	}
	for _, u := range upgrades {
		if u.Status.Phase != upgradesv1alpha1.PhaseCompleted {
			return fmt.Errorf("upgrade %s/%s ended %s: %s", u.Namespace, u.Name, u.Status.Phase, u.Status.Message)
		}
	}
	return nil
}
