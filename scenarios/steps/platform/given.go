package platform

import (
	"fmt"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

func registerGiven(sc *godog.ScenarioContext, w *world) {
	sc.Given(`^a (simplex|duplex|duplex-direct) StarlingX system running "([^"]*)"$`, func(mode, composite string) error {
		if w.env != nil {
			return fmt.Errorf("the operator already runs; describe the system before 'the upgrade operator is running'")
		}
		cfg, err := systemConfig(mode, composite)
		if err != nil {
			return err
		}
		w.cfg, w.haveCfg = cfg, true
		return nil
	})
	sc.Given(`^USM also lists the release "([^"]*)" in state "([^"]*)" requiring "([^"]*)"$`, func(id, state, requires string) error {
		if !w.haveCfg || w.env != nil {
			return fmt.Errorf("describe the system first, and list releases before 'the upgrade operator is running'")
		}
		r := starlingx.Release{ID: id, State: state, Status: "REL", Summary: id + " release"}
		if requires != "" {
			r.Requires = strings.Split(requires, ",")
		}
		w.cfg.Releases = append(w.cfg.Releases, r)
		return nil
	})
	sc.Given(`^the system is (All-in-one|Standard) with (\d+) workers?$`, func(typ string, n int) error {
		if !w.haveCfg || w.env != nil {
			return fmt.Errorf("describe the system first, and its type before 'the upgrade operator is running'")
		}
		w.cfg.SystemType, w.cfg.Workers = typ, n
		return nil
	})
	sc.Given(`^controller-1 is the active controller$`, func() error {
		w.cfg.ActiveController = starlingx.Controller1
		return nil
	})
	sc.Given(`^the next (\d+) strategy builds? (fails?|times? out)$`, func(n int, how string) error {
		w.faults(func(f *starlingx.Faults) {
			if how == "fail" || how == "fails" {
				f.BuildFailures += n
			} else {
				f.BuildTimeouts += n
			}
		})
		return nil
	})
	sc.Given(`^the next apply of a (sw-deploy|kube-upgrade) strategy (fails|times out) at stage (\d+)$`, func(kind, how string, stage int) error {
		typ := starlingx.SwUpgrade
		if kind == "kube-upgrade" {
			typ = starlingx.KubeUpgrade
		}
		w.faults(func(f *starlingx.Faults) {
			sf := starlingx.StageFault{StageID: stage, Type: typ}
			if how == "fails" {
				f.ApplyFailures = append(f.ApplyFailures, sf)
			} else {
				f.ApplyTimeouts = append(f.ApplyTimeouts, sf)
			}
		})
		return nil
	})
	sc.Given(`^the next apply of a sw-deploy strategy fails at its "([^"]*)" step$`, func(step string) error {
		w.faults(func(f *starlingx.Faults) {
			f.ApplyFailures = append(f.ApplyFailures, starlingx.StageFault{Type: starlingx.SwUpgrade, Step: step,
				Reason: "injected failure of " + step})
		})
		return nil
	})
	sc.Given(`^the operator will crash right after it (creates|applies|deletes|swacts) the strategy of step (\d+) and restart (\d+) minutes? later$`,
		func(action string, step, minutes int) error {
			op := map[string]string{"creates": "create", "applies": "apply", "deletes": "delete", "swacts": "swact"}[action]
			n := step // no faults in these runs: the n-th create / apply / delete is step n's
			if op == "swact" {
				n = 1
			}
			w.crash, w.restartDelay = &crashPlan{op: op, n: n}, time.Duration(minutes)*time.Minute
			return nil
		})
	sc.Given(`^the VIM answers 503 to the next strategy create$`, func() error {
		if w.env != nil {
			w.env.VIM.FailNext("create", 1)
		} else {
			w.failCreate++
		}
		return nil
	})
	sc.Given(`^the upgrade operator is running$`, w.start)
}

// faults adds model faults: to the configuration before the run, to the
// running model after.
func (w *world) faults(add func(f *starlingx.Faults)) {
	if w.env == nil {
		add(&w.cfg.Faults)
		return
	}
	w.env.SetFaults(add)
}
