// Package checks holds the invariants every run is judged by, computed from
// an event log (scenarios/eventlog) alone, so they apply unchanged to the
// simulator and to a real cluster.
package checks

import (
	"fmt"
	"sort"
	"strconv"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Pair names the two Deployments of an ordered upgrade.
type Pair struct {
	Namespace string
	Worker    string
	API       string
}

// Report is what Ordering found.
type Report struct {
	// Violations lists every API image write made while a worker pod of an
	// older image still existed (terminating or not); empty means the run is safe.
	Violations []string
	// APIWrites counts DeploymentWrites of a new API image.
	APIWrites int
	// WorkerWrites counts DeploymentWrites of each new worker image.
	WorkerWrites map[string]int
	// Handoff is seconds from the last old worker pod's deletion to the first
	// new API image write; negative when there was no such pair.
	Handoff float64
	// LastOldWorkerDeleted and FirstAPIWrite are the times (seconds) behind Handoff; -1 when absent.
	LastOldWorkerDeleted, FirstAPIWrite float64
}

// Ordered returns events in a global order: by resourceVersion when every
// event carries a numeric one (one etcd orders all writes), else as
// recorded. The input is not modified.
func Ordered(events []eventlog.Event) []eventlog.Event {
	out := append([]eventlog.Event(nil), events...)
	rvs := make([]uint64, len(out))
	for i, e := range out {
		rv, err := strconv.ParseUint(e.RV, 10, 64)
		if err != nil {
			return out
		}
		rvs[i] = rv
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rvs[idx[a]] < rvs[idx[b]] })
	sorted := make([]eventlog.Event, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted
}

// Ordering checks the product's safety property on one Pair: no API image
// write while any worker pod whose image differs from the worker
// Deployment's current image exists. The first DeploymentWrite of each
// Deployment is its initial state, not a write by the operator.
func Ordering(events []eventlog.Event, p Pair) Report {
	rep := Report{WorkerWrites: map[string]int{}, Handoff: -1, LastOldWorkerDeleted: -1, FirstAPIWrite: -1}
	var workerImage, apiImage string
	live := map[string]string{} // worker pod name -> image
	for _, e := range Ordered(events) {
		if e.Namespace != p.Namespace {
			continue
		}
		switch {
		case e.Event == eventlog.DeploymentWrite && e.Name == p.Worker:
			if workerImage != "" && e.Image != workerImage {
				rep.WorkerWrites[e.Image]++
			}
			workerImage = e.Image
		case e.Event == eventlog.DeploymentWrite && e.Name == p.API:
			if apiImage != "" && e.Image != apiImage {
				rep.APIWrites++
				if rep.FirstAPIWrite < 0 {
					rep.FirstAPIWrite = e.T
				}
				for _, name := range sortedKeys(live) {
					if live[name] != workerImage {
						rep.Violations = append(rep.Violations, fmt.Sprintf(
							"t=%.3fs: API image %s written while old worker pod %s (image %s) still exists", e.T, e.Image, name, live[name]))
					}
				}
			}
			apiImage = e.Image
		case e.Deployment == p.Worker && e.Event == eventlog.PodCreated:
			live[e.Name] = e.Image
		case e.Deployment == p.Worker && e.Event == eventlog.PodDeleted:
			if img, ok := live[e.Name]; ok && img != workerImage && rep.FirstAPIWrite < 0 {
				rep.LastOldWorkerDeleted = e.T
			}
			delete(live, e.Name)
		}
	}
	if rep.FirstAPIWrite >= 0 && rep.LastOldWorkerDeleted >= 0 {
		rep.Handoff = rep.FirstAPIWrite - rep.LastOldWorkerDeleted
	}
	return rep
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
