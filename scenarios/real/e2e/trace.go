package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

// TraceEntry is one watch event of a Deployment (its status counters) or an
// ApplicationUpgrade (its phase and message). The event log records what
// the ordering check needs; the trace records what the case checks need
// (stale status, surge windows, counters complete while a pod terminates).
type TraceEntry struct {
	T          float64 `json:"t"`
	Kind       string  `json:"kind"`
	Name       string  `json:"name"`
	RV         uint64  `json:"rv"`
	Generation int64   `json:"gen"`
	// Deployment status.
	ObservedGeneration int64  `json:"og,omitempty"`
	Spec               int32  `json:"spec,omitempty"`
	Replicas           int32  `json:"rep,omitempty"`
	Updated            int32  `json:"upd,omitempty"`
	Available          int32  `json:"avail,omitempty"`
	Terminating        *int32 `json:"term,omitempty"`
	Progressing        string `json:"progressing,omitempty"`
	// ApplicationUpgrade status.
	Phase   string `json:"phase,omitempty"`
	Message string `json:"message,omitempty"`
}

// CountersComplete reports what `kubectl rollout status` would call done:
// generation observed and updated == replicas == available == spec.
func (e TraceEntry) CountersComplete() bool {
	return e.ObservedGeneration >= e.Generation && e.Updated == e.Spec && e.Replicas == e.Spec && e.Available == e.Spec
}

// Trace records TraceEntries from watch events; safe for concurrent use.
type Trace struct {
	mu      sync.Mutex
	start   time.Time
	out     io.Writer
	entries []TraceEntry
}

// NewTrace stamps entries relative to start (as the event log does) and
// writes each as a JSON line to out (may be nil).
func NewTrace(start time.Time, out io.Writer) *Trace { return &Trace{start: start, out: out} }

// Observe implements realcluster.Sink.
func (t *Trace) Observe(typ watch.EventType, obj client.Object, at time.Time) {
	if typ == watch.Deleted {
		return
	}
	rv, _ := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	e := TraceEntry{T: at.Sub(t.start).Seconds(), Name: obj.GetName(), RV: rv, Generation: obj.GetGeneration()}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		e.Kind = "Deployment"
		s := o.Status
		e.ObservedGeneration, e.Replicas, e.Updated, e.Available, e.Terminating = s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, s.TerminatingReplicas
		e.Spec = 1
		if o.Spec.Replicas != nil {
			e.Spec = *o.Spec.Replicas
		}
		for _, c := range s.Conditions {
			if c.Type == appsv1.DeploymentProgressing {
				e.Progressing = string(c.Status) + "/" + c.Reason
			}
		}
	case *upgradesv1alpha1.ApplicationUpgrade:
		e.Kind = "ApplicationUpgrade"
		e.Phase, e.Message = string(o.Status.Phase), o.Status.Message
	default:
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entries = append(t.entries, e)
	if t.out != nil {
		line, _ := json.Marshal(e)
		fmt.Fprintf(t.out, "%s\n", line)
	}
}

// Entries returns a copy of the entries, in arrival order.
func (t *Trace) Entries() []TraceEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]TraceEntry(nil), t.entries...)
}
