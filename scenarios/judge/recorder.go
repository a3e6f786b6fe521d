package judge

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Recorder collects a History. Facts arrive through Observe (a
// simulator subscription or realcluster.Observe); the operator's calls
// through the clients WrapClient returns. Safe for concurrent use.
type Recorder struct {
	mu         sync.Mutex
	start      time.Time
	now        func() time.Time
	events     *eventlog.Recorder
	seen       int
	seq        int64
	facts      []Fact
	ops        []Op
	reconciles int
	live       map[string]string // "Kind/namespace/name" → resourceVersion last seen
}

// NewRecorder records times relative to start, read from now (the
// simulator's virtual clock, or time.Now on a real cluster).
func NewRecorder(start time.Time, now func() time.Time) *Recorder {
	return &Recorder{start: start, now: now, events: eventlog.NewDetailedRecorder(start, nil), live: map[string]string{}}
}

// SetTemplateHash sets the pod-template-hash function of the event
// recorder (eventlog.Recorder.SetTemplateHash): the simulator's on a
// simulated cluster.
func (r *Recorder) SetTemplateHash(fn eventlog.TemplateHashFunc) { r.events.SetTemplateHash(fn) }

// Observe records the facts in a watch event (realcluster.Sink).
func (r *Recorder) Observe(typ watch.EventType, obj client.Object, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events.Observe(typ, obj, at)
	key := LiveKey(fmt.Sprintf("%T", obj), obj.GetNamespace(), obj.GetName())
	if typ == watch.Deleted {
		delete(r.live, key)
	} else {
		r.live[key] = obj.GetResourceVersion()
	}
	for _, e := range r.events.EventsSince(r.seen) {
		r.seq++
		r.facts = append(r.facts, Fact{Event: e, Seq: r.seq})
		r.seen++
	}
}

// LiveKey names an object in Live: its Go type ("*v1.Pod"), namespace and name.
func LiveKey(goType, namespace, name string) string { return goType + "/" + namespace + "/" + name }

// Live returns the resourceVersion of every object whose last recorded
// event was not a deletion. When it equals a fresh list from the API
// server, every change up to that list has been recorded.
func (r *Recorder) Live() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.live)
}

// History returns a copy of what was recorded so far.
func (r *Recorder) History() History {
	r.mu.Lock()
	defer r.mu.Unlock()
	return History{Facts: append([]Fact(nil), r.facts...), Ops: append([]Op(nil), r.ops...)}
}

func (r *Recorder) begin(op *Op) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	op.CallSeq = r.seq
	op.Call = r.now().Sub(r.start).Seconds()
}

func (r *Recorder) end(op *Op) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	op.ReturnSeq = r.seq
	op.Return = r.now().Sub(r.start).Seconds()
	op.ID = len(r.ops) + 1
	r.ops = append(r.ops, *op)
}

// reconcileInfo is what the recording client learns during one reconcile.
type reconcileInfo struct {
	replica int
	n       int
	request string
	upgrade *UpgradeSpec
	phase   string
	comps   map[string]string
}

type infoKey struct{}

// WrapReconciler returns a reconciler that numbers every reconcile of
// replica and lets the recording client attribute calls to it. inner must
// use a client from WrapClient for its calls to be attributed.
func (r *Recorder) WrapReconciler(inner reconcile.Reconciler, replica int) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		r.mu.Lock()
		r.reconciles++
		info := &reconcileInfo{replica: replica, n: r.reconciles, request: req.String()}
		r.mu.Unlock()
		return inner.Reconcile(context.WithValue(ctx, infoKey{}, info), req)
	})
}

func infoFrom(ctx context.Context) *reconcileInfo {
	info, _ := ctx.Value(infoKey{}).(*reconcileInfo)
	return info
}
