package realnode

import (
	"fmt"
	"time"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// ExitReport says when, on the real node, the last old worker container
// exited (the runtime's exit time, eventlog.Event.Exited) and when the API
// image was written. Seconds since the start of the recording.
type ExitReport struct {
	LastOldExit float64 // latest exit of a worker pod of an old image
	APIWrite    float64 // the API Deployment's first image change
	OldPods     int     // old worker pods deleted
}

// CheckExits reads an event log of one upgrade of worker → api in
// namespace and returns the report, or an error when the API image was
// written before an old worker container exited, when an old worker pod's
// deletion carries no exit time (it did not run on a kubelet), or when the
// log has no API image change. An old worker pod is one whose image is not
// the worker's last written image.
func CheckExits(events []eventlog.Event, namespace, worker, api string) (ExitReport, error) {
	var rep ExitReport
	newWorker, apiWrites := "", 0
	apiWrite := -1.0
	for _, e := range events {
		if e.Namespace != namespace || e.Event != eventlog.DeploymentWrite {
			continue
		}
		switch e.Deployment {
		case worker:
			newWorker = e.Image
		case api:
			apiWrites++
			if apiWrites == 2 { // the first is the Deployment's creation
				apiWrite = e.T
			}
		}
	}
	if apiWrite < 0 {
		return rep, fmt.Errorf("realnode: no image change of %s/%s in the event log", namespace, api)
	}
	rep.APIWrite = apiWrite
	for _, e := range events {
		if e.Namespace != namespace || e.Event != eventlog.PodDeleted || e.Deployment != worker || e.Image == newWorker {
			continue
		}
		rep.OldPods++
		if e.Exited == nil {
			return rep, fmt.Errorf("realnode: old worker pod %s/%s deleted at %.3fs with no container exit time: did it run on the real node?", namespace, e.Name, e.T)
		}
		if *e.Exited > rep.LastOldExit {
			rep.LastOldExit = *e.Exited
		}
		if *e.Exited > apiWrite {
			return rep, fmt.Errorf("realnode: %s/%s image written at %.3fs, before old worker pod %s's container exited at %.3fs", namespace, api, apiWrite, e.Name, *e.Exited)
		}
	}
	if rep.OldPods == 0 {
		return rep, fmt.Errorf("realnode: no old %s/%s pod deleted in the event log", namespace, worker)
	}
	return rep, nil
}

// CheckGraceKills checks, for containers that ignore SIGTERM
// (AdaptPodTemplate's IGNORE_SIGTERM), that every old worker pod's
// container ran until the end of its grace period: its exit time
// (Event.Exited, whole seconds, so up to 1 s early) is at least grace − 1 s
// after the pod was seen terminating (PodDeleting; the kubelet starts the
// grace period when it sees the deletion, no earlier). It returns how long
// each old pod's container ran after its deletion, in seconds, or an error
// naming the first pod that exited early or has no exit time. Old pods are
// as in CheckExits.
func CheckGraceKills(events []eventlog.Event, namespace, worker string, grace time.Duration) ([]float64, error) {
	newWorker := ""
	deleting := map[string]float64{}
	for _, e := range events {
		if e.Namespace != namespace || e.Deployment != worker {
			continue
		}
		switch e.Event {
		case eventlog.DeploymentWrite:
			newWorker = e.Image
		case eventlog.PodDeleting:
			if _, ok := deleting[e.Name]; !ok {
				deleting[e.Name] = e.T
			}
		}
	}
	var held []float64
	for _, e := range events {
		if e.Namespace != namespace || e.Event != eventlog.PodDeleted || e.Deployment != worker || e.Image == newWorker {
			continue
		}
		since, ok := deleting[e.Name]
		if !ok || e.Exited == nil {
			return held, fmt.Errorf("realnode: old worker pod %s/%s has no terminating event or no container exit time", namespace, e.Name)
		}
		h := *e.Exited - since
		held = append(held, h)
		if h < grace.Seconds()-1 {
			return held, fmt.Errorf("realnode: old worker pod %s/%s ignores SIGTERM but its container exited %.1fs after its deletion, before the end of its %s grace period", namespace, e.Name, h, grace)
		}
	}
	if len(held) == 0 {
		return nil, fmt.Errorf("realnode: no old %s/%s pod deleted in the event log", namespace, worker)
	}
	return held, nil
}
