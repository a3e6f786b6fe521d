package platform

import (
	"fmt"
	"strings"
	"time"

	"github.com/cucumber/godog"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// registerRevert registers the steps of the abort and failure-state
// scenarios: waits on the USM deploy and the hosts of the system model,
// and checks of the deploy's state history (simulator/starlingx records
// every deploy state change as an EventDeployState).
func registerRevert(sc *godog.ScenarioContext, w *world) {
	sc.Step(`^the USM deploy is "([^"]*)"$`, func(state string) error {
		if _, err := w.upgrade(); err != nil {
			return err
		}
		return w.runUntil("the USM deploy to be "+state, 12*time.Hour, func() bool { return w.deployState() == state })
	})
	sc.When(`^host (\S+) runs "([^"]*)"$`, func(host, rel string) error {
		if _, err := w.upgrade(); err != nil {
			return err
		}
		return w.runUntil(host+" to run "+rel, 12*time.Hour, func() bool { return w.hostRelease(host) == rel })
	})
	sc.Given(`^the system has alarm "([^"]*)" \((management-affecting|not management-affecting)\)$`, func(id, kind string) error {
		if !w.haveCfg || w.env != nil {
			return fmt.Errorf("describe the system first, and its alarms before 'the upgrade operator is running'")
		}
		w.cfg.Alarms = append(w.cfg.Alarms, starlingx.Alarm{ID: id, Severity: "major", Reason: "scenario alarm " + id,
			EntityInstanceID: "host=controller-0", MgmtAffecting: kind == "management-affecting"})
		return nil
	})
	sc.Then(`^the system has alarm "([^"]*)" raised$`, func(id string) error {
		if !w.hasAlarm(id) {
			return fmt.Errorf("alarm %s is not raised", id)
		}
		return nil
	})
	sc.Then(`^the system has no alarm "([^"]*)"$`, func(id string) error {
		if w.hasAlarm(id) {
			return fmt.Errorf("alarm %s is raised", id)
		}
		return nil
	})
	sc.Then(`^USM holds no software deploy$`, func() error {
		if s := w.deployState(); s != "" {
			return fmt.Errorf("USM still holds a software deploy in state %s", s)
		}
		return nil
	})
	sc.Then(`^the software deploy went through "([^"]*)"$`, func(want string) error {
		if got := strings.Join(w.deployHistory(), " → "); got != want {
			return fmt.Errorf("the software deploy went through %q, want %q", got, want)
		}
		return nil
	})
	sc.Then(`^every host runs "([^"]*)"$`, func(rel string) error {
		var bad []string
		w.env.WithModel(func(m *starlingx.System, now time.Time) {
			for _, h := range m.Hosts(now) {
				if h.SoftwareRelease != rel {
					bad = append(bad, h.Hostname+" runs "+h.SoftwareRelease)
				}
			}
		})
		if len(bad) > 0 {
			return fmt.Errorf("not every host runs %s: %s", rel, strings.Join(bad, ", "))
		}
		return nil
	})
	sc.Then(`^sysinv's kube upgrade is "([^"]*)"$`, func(state string) error {
		got := "none"
		w.env.WithModel(func(m *starlingx.System, now time.Time) {
			for _, u := range m.KubeUpgrades(now) {
				got = u.State
			}
		})
		if got != state {
			return fmt.Errorf("sysinv's kube upgrade is %s, want %s", got, state)
		}
		return nil
	})
}

// deployState is the model's USM deploy state, "" when none.
func (w *world) deployState() string {
	var out string
	w.env.WithModel(func(m *starlingx.System, now time.Time) {
		for _, d := range m.Deploys(now) {
			out = d.State
		}
	})
	return out
}

func (w *world) hostRelease(host string) string {
	var out string
	w.env.WithModel(func(m *starlingx.System, now time.Time) {
		for _, h := range m.Hosts(now) {
			if h.Hostname == host {
				out = h.SoftwareRelease
			}
		}
	})
	return out
}

// deployHistory is every USM deploy state the model went through, "deleted"
// when a deploy was deleted.
func (w *world) deployHistory() []string {
	var out []string
	for _, e := range w.env.ModelEvents() {
		if e.Kind == starlingx.EventDeployState {
			out = append(out, e.Detail)
		}
	}
	return out
}

func (w *world) hasAlarm(id string) bool {
	found := false
	w.env.WithModel(func(m *starlingx.System, now time.Time) {
		for _, a := range m.Alarms(now) {
			found = found || a.ID == id
		}
	})
	return found
}
