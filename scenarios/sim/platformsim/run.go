package platformsim

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// RunUntil runs the simulation until cond holds (checked after every
// event) or d of virtual time passes, which is an error naming what.
func (e *Env) RunUntil(what string, d time.Duration, cond func() bool) error {
	deadline := e.Sim.Now().Add(d)
	stop := func() bool { return cond() || !e.Sim.Now().Before(deadline) }
	if _, err := e.Sim.Run(context.Background(), stop, deadline.Sub(e.start)+time.Nanosecond); err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	if !cond() {
		return fmt.Errorf("%s did not happen within %s of virtual time (at %s)", what, d, e.Elapsed())
	}
	return nil
}

// RunFor lets d of virtual time pass.
func (e *Env) RunFor(d time.Duration) error {
	_, err := e.Sim.RunFor(context.Background(), d)
	return err
}

// Observed reports whether the controller has observed the system into
// the status of `system` for its current generation.
func (e *Env) Observed() bool {
	u, err := e.Upgrade()
	return err == nil && u.Status.Release != "" && u.Status.ObservedGeneration == u.Generation
}

// Settled reports whether the Upgrade is done for its generation: no
// deployment running and the status written for the current spec.
func (e *Env) Settled() bool {
	u, err := e.Upgrade()
	if err != nil || u.Status.ObservedGeneration != u.Generation {
		return false
	}
	return u.Status.ActiveDeploy.Status != v1alpha1.DeployStatusDeploying && u.Status.Release != ""
}

// SystemRuns is the model's running composite release,
// "starlingx-13.01.0 / v1.33.0" (Kubernetes "" while mixed).
func (e *Env) SystemRuns() string {
	var out string
	e.WithModel(func(m *starlingx.System, now time.Time) {
		out = m.DeployedRelease(now) + " / " + m.ActiveKubeVersion(now)
	})
	return out
}

// ModelStrategy is the model's strategy (type, uuid, state), if any.
func (e *Env) ModelStrategy() (typ, uuid, state string, ok bool) {
	e.WithModel(func(m *starlingx.System, now time.Time) {
		t, st, exists := m.CurrentStrategy(now)
		if !exists {
			return
		}
		s, _ := m.Strategy(now, t)
		typ, uuid, state, ok = string(t), s.UUID, string(st), true
	})
	return typ, uuid, state, ok
}

// ActiveController is the model's active controller.
func (e *Env) ActiveController() string {
	var out string
	e.WithModel(func(m *starlingx.System, now time.Time) { out = m.ActiveController(now) })
	return out
}

// Creates lists the strategies the operator created, in order, as
// "sw-deploy(starlingx-13.01.2)" / "kube-upgrade(v1.34.1)" (successful
// calls only).
func (e *Env) Creates() []string {
	var out []string
	for _, c := range e.VIM.Calls() {
		if c.Op != "create" || c.Err != nil {
			continue
		}
		kind := "sw-deploy"
		if c.Type == "kube-upgrade" {
			kind = "kube-upgrade"
		}
		out = append(out, kind+"("+c.Target+")")
	}
	return out
}

// SetFaults adds model faults (build and apply failures) for the next
// strategies.
func (e *Env) SetFaults(add func(f *starlingx.Faults)) {
	e.WithModel(func(m *starlingx.System, _ time.Time) {
		f := m.Faults()
		add(&f)
		m.SetFaults(f)
	})
}

// Outage makes the StarlingX APIs answer 503 for d of virtual time from
// now: fakevim's own fault (HAProxy's 503 page; the HTTP client retries
// its GETs) in HTTP runs, the wrapper's in direct runs.
func (e *Env) Outage(d time.Duration) {
	if e.Fake != nil {
		e.clk.Set(e.Sim.Now())
		e.Fake.ApplyFaults(fakevim.FaultRequest{UnavailableFor: fakevim.Duration(d)})
		return
	}
	e.VIM.UnavailableFor(d)
}

// UnavailableAnswers counts the operator's calls that failed as unavailable.
func (e *Env) UnavailableAnswers() int {
	n := 0
	for _, c := range e.VIM.Calls() {
		if c.Err != nil && vim.IsUnavailable(c.Err) {
			n++
		}
	}
	return n
}

// StrategyCreateRequests counts the strategy creates that reached the
// system: fakevim's request log (without injected 503s) in HTTP runs,
// else the call log (without the wrapper's injected faults).
func (e *Env) StrategyCreateRequests() int {
	n := 0
	if e.Fake != nil {
		for _, r := range e.Fake.Requests() {
			if r.Method == http.MethodPost && r.Fault == "" && (r.Path == "/api/orchestration/sw-upgrade/strategy" || r.Path == "/api/orchestration/kube-upgrade/strategy") {
				n++
			}
		}
		return n
	}
	for _, c := range e.VIM.Calls() {
		if c.Op == "create" && !c.Injected {
			n++
		}
	}
	return n
}

// ModelEvents are the model's events (strategy states, swacts, releases
// deployed, steps).
func (e *Env) ModelEvents() []starlingx.Event {
	var out []starlingx.Event
	e.WithModel(func(m *starlingx.System, _ time.Time) { out = m.Events() })
	return out
}
