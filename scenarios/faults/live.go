package faults

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/simulator"
)

// LiveActors are the cluster actors of the features' backends
// (scenarios/cluster): the same implementation as make simulate's
// (actors), aimed at the ApplicationUpgrades of one namespace as they are
// in the cluster at each moment — a feature's steps create them, so there
// is no manifest to track — and recording in the scenario's Boundary.
// Callbacks run one at a time (a real cluster's timers fire on goroutines
// of their own).
type LiveActors struct {
	mu sync.Mutex
	a  *actors
	st *liveStage
}

// NewLiveActors returns the actors of one scenario: rt is the backend's
// runtime, namespace the scenario's, b its boundary (Fired lists what the
// actors did), elapsed its clock, history its recording (the image a
// workload was created with is its first DeploymentWrite). ctx bounds
// every call the actors make: cancel it when the scenario ends.
func NewLiveActors(ctx context.Context, rt ActorRuntime, namespace string, b *Boundary, elapsed func() time.Duration, history func() judge.History) *LiveActors {
	l := &LiveActors{}
	l.st = &liveStage{ctx: ctx, ns: namespace, b: b, clock: elapsed, history: history}
	l.a = &actors{ctx: ctx, rt: lockedRuntime{ActorRuntime: rt, mu: &l.mu}, st: l.st}
	l.st.rt = l.a.rt
	if g, ok := rt.(WebhookGate); ok {
		l.a.gate = g.WebhookDown
	}
	return l
}

// Implements reports whether kind is a fault LiveActors injects.
func Implements(kind Kind) bool { return actorKinds[kind] }

// Inject fires f f.At from now (at once, before Inject returns, for
// @0s). It refuses a fault that is not a cluster actor's or webhook-down.
func (l *LiveActors) Inject(f Fault) error {
	if !actorKinds[f.Kind] {
		return fmt.Errorf("fault %s is not a cluster actor's", f)
	}
	if f.At <= 0 {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.a.fire(f)
		return nil
	}
	l.a.rt.After(f.At, "fault "+f.String(), func() { l.a.fire(f) })
	return nil
}

// Intercept is a simulator API interceptor (simulator.Sim.SetAPIInterceptor)
// refusing what the validating webhook would be sent while webhook-down
// lasts. The simulator calls it on its one goroutine (the actors' own
// calls included), so it takes no lock.
func (l *LiveActors) Intercept(req simulator.APIRequest) error {
	if l.a.webhookRefuses(req) {
		return webhookErr()
	}
	return nil
}

// Violations are what the actors saw that must never happen
// (gitops-revert: the upgrade Completed while its workload runs the
// reverted image).
func (l *LiveActors) Violations() []string {
	l.st.vmu.Lock()
	defer l.st.vmu.Unlock()
	return append([]string(nil), l.st.violations...)
}

// lockedRuntime runs every callback under mu.
type lockedRuntime struct {
	ActorRuntime
	mu *sync.Mutex
}

func (r lockedRuntime) After(d time.Duration, what string, fn func()) {
	r.ActorRuntime.After(d, what, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		fn()
	})
}

// liveStage reads the actors' targets from the cluster.
type liveStage struct {
	ctx     context.Context
	rt      ActorRuntime
	ns      string
	b       *Boundary
	clock   func() time.Duration
	history func() judge.History

	vmu        sync.Mutex
	violations []string
}

// observer is the client name the stage reads with.
const observer = "fault-actors/observer"

// list is the namespace's upgrades (at the hub version), by name.
func (s *liveStage) list() []upgradesv1beta1.ApplicationUpgrade {
	var l upgradesv1beta1.ApplicationUpgradeList
	if err := s.rt.Client(observer).List(s.ctx, &l, client.InNamespace(s.ns)); err != nil {
		s.note("the fault actors could not list the upgrades of namespace " + s.ns + ": " + err.Error())
		return nil
	}
	return l.Items
}

func (s *liveStage) component(dep string) (component, bool) {
	ups := s.list()
	for i := range ups {
		for _, c := range componentsOf(&ups[i]) {
			if c.Name == dep {
				return c, true
			}
		}
	}
	return component{}, false
}

func (s *liveStage) targetImage(c component) string {
	var u upgradesv1beta1.ApplicationUpgrade
	if err := s.rt.Client(observer).Get(s.ctx, c.Upgrade, &u); err == nil {
		for _, now := range componentsOf(&u) {
			if now.Name == c.Name {
				return now.Image
			}
		}
	}
	return c.Image
}

// originalImage is the image the recording saw c's workload created with
// (its first DeploymentWrite).
func (s *liveStage) originalImage(c component) string {
	kind := string(c.Kind)
	if c.Kind == upgradesv1beta1.KindDeployment {
		kind = ""
	}
	container := s.containerName(c)
	for _, f := range s.history().Facts {
		if f.Event.Event != eventlog.DeploymentWrite || f.Namespace != c.Workload.Namespace || f.Deployment != c.Workload.Name || f.Kind != kind {
			continue
		}
		for _, ct := range f.Containers {
			if ct.Name == container {
				return ct.Image
			}
		}
		return f.Image
	}
	return ""
}

func (s *liveStage) containerName(c component) string {
	if c.Container != "" {
		return c.Container
	}
	w := newWorkload(c.Kind)
	if err := s.rt.Client(observer).Get(s.ctx, c.Workload, w); err == nil {
		if _, tpl := workloadTemplate(w); len(tpl.Spec.Containers) == 1 {
			return tpl.Spec.Containers[0].Name
		}
	}
	return c.Name
}

// upgrades are the namespace's upgrades now, as manifests: name, labels,
// annotations and spec (what a re-apply creates again).
func (s *liveStage) upgrades() []client.Object {
	var out []client.Object
	for _, u := range s.list() {
		m := &upgradesv1beta1.ApplicationUpgrade{Spec: u.Spec}
		m.Name, m.Namespace, m.Labels, m.Annotations = u.Name, u.Namespace, u.Labels, u.Annotations
		out = append(out, m)
	}
	return out
}

// The cluster is the record of the targets and of deletions.
func (s *liveStage) retarget(client.Object)                    { /* read from the cluster */ }
func (s *liveStage) deleted([]client.Object, time.Time)        { /* read from the cluster */ }
func (s *liveStage) reapplied()                                { /* read from the cluster */ }
func (s *liveStage) pods() []client.ListOption                 { return []client.ListOption{client.InNamespace(s.ns)} }
func (s *liveStage) elapsed() time.Duration                    { return s.clock() }
func (s *liveStage) note(line string)                          { s.b.Mark(line) }
func (s *liveStage) record(f Fault, d time.Duration, n string) { s.b.Record(f, d, n) }

func (s *liveStage) violate(format string, args ...any) {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
}
