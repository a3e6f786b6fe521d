package faults

import (
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/simulator"
)

// fireTimed fires a time-triggered fault.
func (in *Injector) fireTimed(f Fault) {
	switch f.Kind {
	case Crash:
		if f.Float("p") > 0 {
			in.startRandomKills(f)
			return
		}
		in.crash(in.target(), f)
	case Stale, Drop:
		in.cacheFault(f)
	case LeaseLost:
		in.leaseLost(f)
	case Pause:
		in.pause(f)
	case KCMLag:
		in.kcmLag(f)
	default:
		in.actors.fire(f)
	}
}

// cacheFault fires stale or drop on every process's informers.
func (in *Injector) cacheFault(f Fault) {
	caches := func() []*Cache {
		var out []*Cache
		for _, p := range in.procs {
			out = append(out, p.cache)
		}
		return out
	}
	if err := FireCacheFault(in.ctx, in.sim, f, caches, in.record); err != nil {
		in.violate("%v", err)
	}
}

// kcmLag delays the watch events of the Deployment and ReplicaSet controllers.
func (in *Injector) kcmLag(f Fault) {
	d, lag := f.Dur("for"), f.Dur("lag")
	in.record(f, d, fmt.Sprintf("the Deployment and ReplicaSet controllers see events %s late for %s", lag, d))
	names := []string{simulator.DeploymentControllerName, simulator.ReplicaSetControllerName}
	for _, n := range names {
		in.sim.Controller(n).SetWatchDelay(lag)
	}
	in.sim.Schedule(d, "end of "+f.String(), func() {
		for _, n := range names {
			in.sim.Controller(n).SetWatchDelay(0)
		}
	})
}

// component returns the component called dep of the first upgrade that
// has one, with its current target image.
func (in *Injector) component(dep string) (component, bool) {
	for _, u := range in.upgrades {
		if s := in.spec[client.ObjectKeyFromObject(u)]; s != nil {
			if c, ok := s.component(dep); ok {
				return *c, true
			}
		}
	}
	return component{}, false
}

// retarget records u's new targets: the terminal state follows them, and
// writing an image again is no duplicate once the targets changed (v2, v3,
// then the original manifest re-applied: v2 again).
func (in *Injector) retarget(u client.Object) {
	in.spec[client.ObjectKeyFromObject(u)] = newTargetSpec(u)
	in.writes = map[string]int{}
}

func (in *Injector) allDeleted() bool {
	for _, s := range in.spec {
		if !s.deleted {
			return false
		}
	}
	return true
}

// simRuntime is the simulator as the actors' runtime: clients by name,
// virtual time, events on the simulator's heap.
type simRuntime struct{ sim *simulator.Sim }

// SimActorRuntime returns sim as an ActorRuntime (the features' simulator
// backend gives it to NewLiveActors).
func SimActorRuntime(sim *simulator.Sim) ActorRuntime { return simRuntime{sim} }

func (r simRuntime) Client(name string) client.Client { return r.sim.ClientFor(name) }
func (r simRuntime) Now() time.Time                   { return r.sim.Now() }
func (r simRuntime) After(d time.Duration, what string, fn func()) {
	r.sim.Schedule(d, what, fn)
}

// injectorStage is the Injector as the actors' stage: the run's manifests
// as prepared, their targets as the Injector tracks them, its transcript.
type injectorStage struct{ in *Injector }

func (s injectorStage) component(dep string) (component, bool) { return s.in.component(dep) }
func (s injectorStage) targetImage(c component) string         { return s.in.targetImage(c) }
func (s injectorStage) originalImage(c component) string       { return originalImage(s.in.objs, c) }
func (s injectorStage) containerName(c component) string       { return containerName(s.in.objs, c) }
func (s injectorStage) upgrades() []client.Object              { return s.in.upgrades }
func (s injectorStage) retarget(u client.Object)               { s.in.retarget(u) }
func (s injectorStage) pods() []client.ListOption              { return nil }
func (s injectorStage) elapsed() time.Duration                 { return s.in.sim.Elapsed() }
func (s injectorStage) note(line string)                       { s.in.note(line) }
func (s injectorStage) violate(format string, args ...any)     { s.in.violate(format, args...) }
func (s injectorStage) record(f Fault, d time.Duration, note string) {
	s.in.record(f, d, note)
}

func (s injectorStage) deleted(ups []client.Object, t time.Time) {
	for _, u := range ups {
		s.in.spec[client.ObjectKeyFromObject(u)].deleted = true
	}
	s.in.deletedAt = t
}

func (s injectorStage) reapplied() { s.in.deletedAt = time.Time{} }

// targetImage is comp's current target image in its upgrade.
func (in *Injector) targetImage(comp component) string {
	if s := in.spec[comp.Upgrade]; s != nil {
		if c, ok := s.component(comp.Name); ok {
			return c.Image
		}
	}
	return comp.Image
}
