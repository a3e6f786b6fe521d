// Package judge is the one judge of every run. It records what happened
// during a scenario on either backend — the cluster's ordering-relevant
// facts (the detailed event log, from the simulator's store or a real
// cluster's watches) and every API call
// the operator made, with call and return times — and judges it: a
// porcupine model in which writing the caller's (API's) image is legal only
// while the callee (worker) is fully rolled out, and plain invariants beside
// it. On a failure it writes porcupine's HTML visualization and the logs to
// an artifacts folder.
package judge

import (
	"cmp"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/render/timeline"
)

// Fact is one entry of the detailed event log with its place in the
// recording sequence (shared with the operator's calls).
type Fact struct {
	eventlog.Event
	Seq int64 `json:"seq"`
}

// UpgradeSpec is the part of an ApplicationUpgrade a reconcile read that
// the model needs: its dependency graph — each component's Deployment,
// target image and the components it depends on. Worker / API name the
// callee and caller of a v1alpha1-shaped upgrade (two components, one
// depending on the other); empty for other graphs.
type UpgradeSpec struct {
	Name string `json:"name"`
	// Namespace is the upgrade's; "" where the recording did not say it
	// (then the reconciled request's, or the call's, is used).
	Namespace   string `json:"namespace,omitempty"`
	Generation  int64  `json:"generation"`
	Worker      string `json:"worker,omitempty"`
	WorkerImage string `json:"workerImage,omitempty"`
	API         string `json:"api,omitempty"`
	APIImage    string `json:"apiImage,omitempty"`
	// Components are the graph's nodes, in spec order.
	Components []ComponentSpec `json:"components,omitempty"`
}

// ComponentSpec is one node of an upgrade's dependency graph.
type ComponentSpec struct {
	Name       string `json:"name"`
	Deployment string `json:"deployment"`
	// Namespace is the Deployment's namespace when it is not the upgrade's.
	Namespace string `json:"namespace,omitempty"`
	// Kind is the workload's kind: "" for a Deployment, "StatefulSet"
	// or "DaemonSet" (eventlog.Event.Kind).
	Kind      string   `json:"kind,omitempty"`
	Image     string   `json:"image"`
	DependsOn []string `json:"dependsOn,omitempty"`
}

// key is the eventlog.WorkloadKey of c's workload in an upgrade of
// namespace ns.
func (c ComponentSpec) key(ns string) string {
	return eventlog.WorkloadKey(c.Kind, cmp.Or(c.Namespace, ns), c.Deployment)
}

// Graph returns u's components: Components, or for a spec that names only
// Worker and API, "worker" and "api" with the API depending on the worker.
func (u *UpgradeSpec) Graph() []ComponentSpec {
	if len(u.Components) > 0 || u.Worker == "" {
		return u.Components
	}
	return []ComponentSpec{
		{Name: "worker", Deployment: u.Worker, Image: u.WorkerImage},
		{Name: "api", Deployment: u.API, Image: u.APIImage, DependsOn: []string{"worker"}},
	}
}

// Component returns the component named name, or false.
func (u *UpgradeSpec) Component(name string) (ComponentSpec, bool) {
	for _, c := range u.Graph() {
		if c.Name == name {
			return c, true
		}
	}
	return ComponentSpec{}, false
}

// componentOn returns the component whose workload is the kind (""
// or "Deployment" for a Deployment) named name in namespace (any when
// ""), for an upgrade in namespace ns, or false.
func (u *UpgradeSpec) componentOn(kind, namespace, name, ns string) (ComponentSpec, bool) {
	want := eventlog.WorkloadKey(kind, namespace, name)
	for _, c := range u.Graph() {
		if c.Deployment != name {
			continue
		}
		if namespace == "" && eventlog.WorkloadKey(c.Kind, "", c.Deployment) == eventlog.WorkloadKey(kind, "", name) {
			return c, true
		}
		if c.key(ns) == want {
			return c, true
		}
	}
	return ComponentSpec{}, false
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
	// FromLog: no call was recorded; the op stands for a template write the
	// event log shows (a DeploymentWrite fact whose image is a component's
	// target), so the model judges it like a recorded write (Judge).
	FromLog bool `json:"fromLog,omitempty"`

	// Images are a Deployment's pod-template images as written or read.
	Images []string `json:"images,omitempty"`
	// Replicas is a Deployment's spec.replicas as written.
	Replicas int32 `json:"replicas,omitempty"`
	// Phase is an ApplicationUpgrade's phase as written (status) or read.
	Phase string `json:"phase,omitempty"`
	// PrevPhase is the phase the reconcile read before writing Phase.
	PrevPhase string `json:"prevPhase,omitempty"`
	// Components are an ApplicationUpgrade's component phases as written
	// (status) or read, by component name; PrevComponents those the
	// reconcile read before writing them.
	Components     map[string]string `json:"components,omitempty"`
	PrevComponents map[string]string `json:"prevComponents,omitempty"`
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
	// Incomplete says why the facts may lack the latest changes (a real
	// cluster's watch had not caught up when the history was taken); Check
	// fails such a history rather than judge it on a partial record.
	Incomplete string `json:"incomplete,omitempty"`
	// Faults are the windows of the faults that fired, shaded on the
	// timeline of a failure (faults.Spans).
	Faults []timeline.Span `json:"-"`
}

// Events returns the facts as an event log, in recording order.
func (h History) Events() []eventlog.Event {
	out := make([]eventlog.Event, len(h.Facts))
	for i, f := range h.Facts {
		out[i] = f.Event
	}
	return out
}
