package realnode

import (
	"fmt"

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
