// Package platform holds the godog step definitions of the platform
// Upgrade features (features/platform_*.feature). Each scenario gets a
// fresh world: a StarlingX system configuration, then a simulator run
// (scenarios/sim/platformsim) with the operator's reconciler, talking to the
// system model directly or, for the HTTP suite, to fakevim over HTTP.
package platform

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/release"
	"github.com/lunadas/upgrade-operator/scenarios/sim/platformsim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// Backend selects how the operator reaches the StarlingX system.
type Backend int

// The backends.
const (
	Direct Backend = iota // the model through platformsim.NewDirectClient
	HTTP                  // fakevim over HTTP (httptest)
)

// world is one scenario's state.
type world struct {
	backend Backend
	seed    int64
	cfg     starlingx.Config
	haveCfg bool
	env     *platformsim.Env

	restartDelay time.Duration
	crash        *crashPlan
	patchErr     error
	crashAt      time.Time
	crashCalls   int // calls made before the crash
	crashUUID    string
	failCreate   int
	outageFrom   time.Time
	outageTo     time.Time
}

// crashPlan crashes the operator right after its n-th successful call of op.
type crashPlan struct {
	op string
	n  int
}

// Initialize registers the steps for one scenario on backend, seeding its
// simulator with seed.
func Initialize(sc *godog.ScenarioContext, backend Backend, seed int64) {
	w := &world{backend: backend, seed: seed}
	sc.After(func(ctx context.Context, s *godog.Scenario, err error) (context.Context, error) {
		if os.Getenv("PLATFORM_TRACE") != "" {
			fmt.Printf("\n--- %s\n%s\n", s.Name, w.describe())
		}
		if w.env != nil {
			w.env.Close()
		}
		return ctx, nil
	})
	registerGiven(sc, w)
	registerWhen(sc, w)
	registerThen(sc, w)
}

// systemConfig is the demo system running composite c in mode: releases of
// the running major up to the running one deployed, older majors unavailable.
func systemConfig(mode, composite string) (starlingx.Config, error) {
	c, err := release.ParseComposite(composite)
	if err != nil {
		return starlingx.Config{}, err
	}
	cfg := starlingx.DemoConfig(starlingx.SystemMode(mode), time.Time{})
	cfg.DeployedRelease, cfg.ActiveKubeVersion = c.Platform.String(), c.Kubernetes.String()
	found := false
	for i := range cfg.Releases {
		id := release.MustParseID(cfg.Releases[i].ID)
		switch {
		case id.Equal(c.Platform):
			found = true
			cfg.Releases[i].State = starlingx.ReleaseDeployed
		case id.SameMajor(c.Platform) && id.Compare(c.Platform) < 0:
			cfg.Releases[i].State = starlingx.ReleaseDeployed
		case !id.SameMajor(c.Platform) && id.Compare(c.Platform) < 0:
			cfg.Releases[i].State = starlingx.ReleaseUnavailable
		}
	}
	if !found {
		return cfg, fmt.Errorf("the demo system has no release %s", c.Platform)
	}
	return cfg, nil
}

// start builds the run and starts the operator.
func (w *world) start() error {
	if !w.haveCfg {
		return fmt.Errorf("no StarlingX system: start the scenario with 'Given a <mode> StarlingX system running ...'")
	}
	env, err := platformsim.New(platformsim.Options{Seed: w.seed, System: w.cfg, HTTP: w.backend == HTTP, RestartDelay: w.restartDelay})
	if err != nil {
		return err
	}
	w.env = env
	if w.failCreate > 0 {
		env.VIM.FailNext("create", w.failCreate)
	}
	if w.crash != nil {
		w.armCrash(*w.crash)
	}
	env.Start()
	return env.RunUntil("the operator to observe the system", time.Hour, env.Observed)
}

// armCrash crashes the operator after the plan's call.
func (w *world) armCrash(p crashPlan) {
	seen := 0
	w.env.VIM.AfterCall(func(c platformsim.Call) {
		if c.Op != p.op || c.Err != nil {
			return
		}
		seen++
		if seen == p.n {
			w.crashAt = c.At
			w.env.Crash()
		}
	})
}

func (w *world) upgrade() (*v1alpha1.Upgrade, error) {
	if w.env == nil {
		return nil, fmt.Errorf("the operator is not running: add 'Given the upgrade operator is running'")
	}
	return w.env.Upgrade()
}

// planStep is step n (1-based) of status.deployPlan as "sw-deploy(x)".
func (w *world) planStep(n int) (string, error) {
	u, err := w.settle()
	if err != nil {
		return "", err
	}
	steps := u.Status.DeployPlan.DeploySteps
	if n < 1 || n > len(steps) {
		return "", fmt.Errorf("the deploy plan has %d step(s), no step %d: %s", len(steps), n, planString(u.Status.DeployPlan))
	}
	return fmt.Sprintf("%s(%s)", steps[n-1].Type, steps[n-1].Target), nil
}

func planString(p v1alpha1.DeployPlan) string {
	parts := make([]string, len(p.DeploySteps))
	for i, s := range p.DeploySteps {
		parts[i] = fmt.Sprintf("%s(%s)", s.Type, s.Target)
	}
	return strings.Join(parts, " → ")
}

// describe summarises the run for failure messages.
func (w *world) describe() string {
	if w.env == nil {
		return "(no run)"
	}
	u, err := w.env.Upgrade()
	if err != nil {
		return err.Error()
	}
	var evs []string
	for _, e := range w.env.Events() {
		evs = append(evs, fmt.Sprintf("  %s %s %s: %s", e.At, e.Type, e.Reason, e.Message))
	}
	return fmt.Sprintf("at virtual %s; the system runs %s; status.activeDeploy %+v; plan %s; conditions %v; strategies created %v; events:\n%s",
		w.env.Elapsed(), w.env.SystemRuns(), u.Status.ActiveDeploy, planString(u.Status.DeployPlan), conditions(u), w.env.Creates(), strings.Join(evs, "\n"))
}

func conditions(u *v1alpha1.Upgrade) []string {
	var out []string
	for _, c := range u.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return out
}
