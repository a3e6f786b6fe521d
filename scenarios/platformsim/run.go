package platformsim

import (
	"context"
	"fmt"
	"time"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
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
