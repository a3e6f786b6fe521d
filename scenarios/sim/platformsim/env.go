// Package platformsim runs the platform Upgrade controller in the
// simulator: the operator's real reconciler against the simulated API
// server, in virtual time, talking to the StarlingX system model either
// directly (stx_client.go, NewDirectClient) or over HTTP to fakevim
// (httptest servers on 127.0.0.1 whose model clock is the simulator's virtual clock). It adds
// what scenarios need: users' merge patches through the admission
// webhook's rules, fault injection (VIM outages, build and apply faults,
// operator crashes at chosen calls), the call log and the events.
package platformsim

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/controller"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
	"github.com/lunadas/upgrade-operator/simulator"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// Options configure a run.
type Options struct {
	// Seed drives the simulator and the model's uuids.
	Seed int64
	// System is the StarlingX system at the start.
	System starlingx.Config
	// HTTP talks to fakevim over HTTP instead of the model directly.
	HTTP bool
	// PollInterval, IdlePollInterval, SoonInterval and MaxBuildRetries
	// configure the reconciler (zero: its defaults).
	PollInterval, IdlePollInterval, SoonInterval time.Duration
	MaxBuildRetries                              int
	// RestartDelay is the down time of a crashed operator; default 1 minute.
	RestartDelay time.Duration
}

// Env is one run.
type Env struct {
	Sim        *simulator.Sim
	VIM        *Wrapper
	Reconciler *controller.UpgradeReconciler
	Ctl        *simulator.Controller
	// Fake is the fakevim server (HTTP runs only).
	Fake *fakevim.Server

	opts      Options
	model     *starlingx.System
	start     time.Time
	events    eventSink
	history   []v1alpha1.UpgradeStatus
	crashes   int
	clk       *sharedClock
	closeHTTP func()
}

// New builds a run: the simulator with the Upgrade kind cluster-scoped,
// the model, the VIM client and the reconciler (not started yet).
func New(opts Options) (*Env, error) {
	if opts.RestartDelay == 0 {
		opts.RestartDelay = time.Minute
	}
	sim := simrun.NewSim(simulator.Options{Seed: opts.Seed, Start: opts.System.Start})
	sim.SetClusterScoped(schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: "Upgrade"})
	cfg := opts.System
	cfg.Start = sim.Now()
	if cfg.Seed == 0 {
		cfg.Seed = uint64(opts.Seed) + 1
	}
	model, err := starlingx.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("build the starlingx model: %w", err)
	}
	e := &Env{Sim: sim, opts: opts, model: model, start: sim.Now()}
	e.events.clock, e.events.start = sim.Clock(), sim.Now()
	w := &Wrapper{now: sim.Now}
	if opts.HTTP {
		if err := e.serveHTTP(w); err != nil {
			return nil, err
		}
	} else {
		w.next = NewDirectClient(model, sim.Now)
	}
	e.VIM = w
	e.Reconciler = &controller.UpgradeReconciler{
		Client: sim.Client(), VIM: w, Clock: sim.Clock(), Recorder: &e.events,
		PollInterval: opts.PollInterval, IdlePollInterval: opts.IdlePollInterval, SoonInterval: opts.SoonInterval,
		MaxBuildRetries: opts.MaxBuildRetries,
	}
	sim.Subscribe(func(ev simulator.WatchEvent) {
		if u, ok := ev.Object.(*v1alpha1.Upgrade); ok && ev.Type != watch.Deleted {
			e.history = append(e.history, *u.Status.DeepCopy())
		}
	})
	return e, nil
}

// serveHTTP starts fakevim on an httptest server with the virtual clock
// (published by the wrapper before each call) as model and wall clock,
// and an HTTP client that does not sleep between retries.
func (e *Env) serveHTTP(w *Wrapper) error {
	clk := &sharedClock{t: e.Sim.Now()}
	w.publish, e.clk = clk.Set, clk
	srv, err := fakevim.New(fakevim.Options{Model: e.model, Clock: clk.Now, Wall: clk.Now, Password: "sim-password"})
	if err != nil {
		return err
	}
	hs := httptest.NewServer(srv.Handler())
	srv.SetURLs(fakevim.ServiceURLs{Keystone: hs.URL, VIM: hs.URL, USM: hs.URL, Sysinv: hs.URL})
	c, err := vim.New(vim.Config{
		Credentials: vim.Credentials{AuthURL: hs.URL, Username: "admin", Password: "sim-password"},
		Now:         clk.Now,
		Sleep:       func(<-chan struct{}, time.Duration) bool { return true },
	})
	if err != nil {
		hs.Close()
		return err
	}
	e.Fake, w.next, e.closeHTTP = srv, c, hs.Close
	return nil
}

// Close stops the HTTP servers of an HTTP run.
func (e *Env) Close() {
	if e.closeHTTP != nil {
		e.closeHTTP()
	}
}

// Start registers the controller (woken by spec changes, as the manager's
// GenerationChangedPredicate does) and schedules the bootstrap.
func (e *Env) Start() {
	e.Ctl = e.Sim.AddController("upgrade", e.Reconciler, simulator.Watch{
		Object: &v1alpha1.Upgrade{},
		Filter: func(ev simulator.WatchEvent) bool {
			return ev.Type != watch.Modified || ev.Old == nil || ev.Old.GetGeneration() != ev.Object.GetGeneration()
		},
	})
	e.scheduleBootstrap(0)
}

// scheduleBootstrap runs the bootstrap after d, again 10s later while it fails.
func (e *Env) scheduleBootstrap(d time.Duration) {
	b := &controller.Bootstrap{Client: e.Sim.Client(), VIM: e.VIM}
	e.Sim.Schedule(d, "bootstrap the system upgrade", func() {
		if e.Ctl.Crashed() {
			return
		}
		if err := b.Once(context.Background()); err != nil {
			e.scheduleBootstrap(10 * time.Second)
		}
	})
}

// Crash kills the operator now and restarts it after Options.RestartDelay
// (a cold start: queue, back-offs and requeues lost; bootstrap again).
func (e *Env) Crash() { e.CrashFor(e.opts.RestartDelay) }

// CrashFor kills the operator now and restarts it after down.
func (e *Env) CrashFor(down time.Duration) {
	if e.Ctl.Crashed() {
		return
	}
	e.crashes++
	e.Ctl.Crash()
	e.Sim.Schedule(down, "restart the operator", func() {
		e.Ctl.Restart()
		e.scheduleBootstrap(0)
	})
}

// Crashes is how many times the operator was crashed.
func (e *Env) Crashes() int { return e.crashes }

// WithModel runs fn on the model at the current virtual time (under
// fakevim's lock in HTTP runs).
func (e *Env) WithModel(fn func(m *starlingx.System, now time.Time)) {
	if e.Fake != nil {
		e.clk.Set(e.Sim.Now())
		e.Fake.WithModel(fn)
		return
	}
	e.model.Advance(e.Sim.Now())
	fn(e.model, e.Sim.Now())
}

// Elapsed is the virtual time since the start.
func (e *Env) Elapsed() time.Duration { return e.Sim.Now().Sub(e.start) }

// History is every status the Upgrade was written with, in order.
func (e *Env) History() []v1alpha1.UpgradeStatus { return e.history }

// sharedClock is the virtual time handed from the simulator's goroutine
// to fakevim's handler goroutines.
type sharedClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *sharedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *sharedClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}
