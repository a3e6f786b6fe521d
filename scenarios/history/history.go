// Package history records what happened during a scenario on either
// backend — the cluster's ordering-relevant facts (the detailed event log,
// from the simulator's store or a real cluster's watches) and every API call
// the operator made, with call and return times — and judges it: a
// porcupine model in which writing the caller's (API's) image is legal only
// while the callee (worker) is fully rolled out, and plain invariants beside
// it. On a failure it writes porcupine's HTML visualization and the logs to
// an artifacts folder.
package history

import (
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Fact is one entry of the detailed event log with its place in the
// recording sequence (shared with the operator's calls).
type Fact struct {
	eventlog.Event
	Seq int64 `json:"seq"`
}

// UpgradeSpec is the part of an ApplicationUpgrade a reconcile read that
// the model needs: which Deployments are callee and caller, and their
// target images.
type UpgradeSpec struct {
	Name        string `json:"name"`
	Generation  int64  `json:"generation"`
	Worker      string `json:"worker"`
	WorkerImage string `json:"workerImage"`
	API         string `json:"api"`
	APIImage    string `json:"apiImage"`
}

// Op is one API call the operator made.
type Op struct {
	ID int `json:"id"`
	// Replica is the operator process (0 for the first; C10 runs two).
	Replica int `json:"replica"`
	// Reconcile numbers the reconcile the call belongs to (from 1, per run).
	Reconcile int `json:"reconcile"`
	// Request is namespace/name of the ApplicationUpgrade being reconciled.
	Request   string `json:"request,omitempty"`
	Verb      string `json:"verb"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Sub       string `json:"subresource,omitempty"`
	// Call and Return are seconds since the start of the recording
	// (virtual seconds in the simulator, wall-clock on a real cluster).
	Call   float64 `json:"call"`
	Return float64 `json:"return"`
	// CallSeq and ReturnSeq place the call among the facts.
	CallSeq   int64 `json:"callSeq"`
	ReturnSeq int64 `json:"returnSeq"`
	// RV is the resourceVersion of the object written or read.
	RV  string `json:"rv,omitempty"`
	Err string `json:"err,omitempty"`
	// Injected: the error came from a fault of the scenario, not the API.
	Injected bool `json:"injected,omitempty"`

	// Images are a Deployment's pod-template images as written or read.
	Images []string `json:"images,omitempty"`
	// Replicas is a Deployment's spec.replicas as written.
	Replicas int32 `json:"replicas,omitempty"`
	// Phase is an ApplicationUpgrade's phase as written (status) or read.
	Phase string `json:"phase,omitempty"`
	// PrevPhase is the phase the reconcile read before writing Phase.
	PrevPhase string `json:"prevPhase,omitempty"`
	// Status is a Deployment's counters as read.
	Status *eventlog.Counters `json:"status,omitempty"`
	// Items summarises a list ("3 pods: 2×abc (1 terminating), 1×def").
	Items string `json:"items,omitempty"`
	// Upgrade is the spec of the reconciled upgrade, as the reconcile read it.
	Upgrade *UpgradeSpec `json:"upgrade,omitempty"`
}

// Write reports whether the call could change the cluster.
func (o *Op) Write() bool {
	switch o.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// OK reports whether the call succeeded.
func (o *Op) OK() bool { return o.Err == "" }

// History is everything recorded in one scenario.
type History struct {
	Facts []Fact `json:"facts"`
	Ops   []Op   `json:"ops"`
}

// Events returns the facts as an event log, in recording order.
func (h History) Events() []eventlog.Event {
	out := make([]eventlog.Event, len(h.Facts))
	for i, f := range h.Facts {
		out[i] = f.Event
	}
	return out
}
