package platform

import (
	"fmt"
	"time"

	"github.com/cucumber/godog"

	plctl "github.com/lunadas/upgrade-operator/operator/platform/controller"
)

func registerWhen(sc *godog.ScenarioContext, w *world) {
	sc.When(`^the user patches the system Upgrade with '([^']*)'$`, func(body string) error {
		if _, err := w.upgrade(); err != nil {
			return err
		}
		if err := w.env.Patch(body); err != nil {
			return fmt.Errorf("the patch was refused: %w", err)
		}
		return nil
	})
	sc.When(`^the user tries to patch the system Upgrade with '([^']*)'$`, func(body string) error {
		if _, err := w.upgrade(); err != nil {
			return err
		}
		w.patchErr = w.env.Patch(body)
		return nil
	})
	sc.When(`^step (\d+) is (building|applying)$`, func(n int, state string) error {
		step, err := w.planStep(n)
		if err != nil {
			return err
		}
		return w.runUntil(fmt.Sprintf("step %d %s to be %s", n, step, state), 12*time.Hour, func() bool {
			u, err := w.env.Upgrade()
			if err != nil || u.Status.ActiveDeploy.ReleaseDeploying != deployingOf(step) {
				return false
			}
			typ, _, st, ok := w.env.ModelStrategy()
			return ok && st == state && typ == strategyTypeOf(step)
		})
	})
	sc.When(`^the VIM answers 503 to every request for the next (\d+) polls$`, func(n int) error {
		return w.outage(time.Duration(n)*plctl.DefaultPollInterval + time.Second)
	})
	sc.When(`^the VIM does not answer any request in time for the next (\d+) polls$`, func(n int) error {
		if _, err := w.upgrade(); err != nil {
			return err
		}
		d := time.Duration(n)*plctl.DefaultPollInterval + time.Second
		w.outageFrom, w.outageTo = w.env.Sim.Now(), w.env.Sim.Now().Add(d)
		w.env.VIM.TimeoutFor(d)
		return nil
	})
	sc.When(`^the VIM answers 503 to every request for (\d+) minutes$`, func(n int) error {
		return w.outage(time.Duration(n) * time.Minute)
	})
	sc.When(`^the operator crashes and restarts (\d+) minutes? later$`, func(n int) error {
		if _, err := w.upgrade(); err != nil {
			return err
		}
		w.crashAt, w.crashCalls = w.env.Sim.Now(), len(w.env.VIM.Calls())
		_, w.crashUUID, _, _ = w.env.ModelStrategy()
		w.env.CrashFor(time.Duration(n) * time.Minute)
		return nil
	})
	sc.When(`^(\d+) (minutes?|hours?) pass(?:es)?$`, func(n int, unit string) error {
		if _, err := w.upgrade(); err != nil {
			return err
		}
		d := time.Duration(n) * time.Minute
		if unit[0] == 'h' {
			d = time.Duration(n) * time.Hour
		}
		return w.env.RunFor(d)
	})
}

func (w *world) outage(d time.Duration) error {
	if _, err := w.upgrade(); err != nil {
		return err
	}
	w.outageFrom, w.outageTo = w.env.Sim.Now(), w.env.Sim.Now().Add(d)
	w.env.Outage(d)
	return nil
}

func (w *world) runUntil(what string, d time.Duration, cond func() bool) error {
	if err := w.env.RunUntil(what, d, cond); err != nil {
		return fmt.Errorf("%w\n%s", err, w.describe())
	}
	return nil
}
