package platform

import (
	"fmt"
	"strings"

	"github.com/cucumber/godog"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

func registerVIMChecks(sc *godog.ScenarioContext, w *world) {
	sc.Then(`^the operator created the strategies "([^"]*)"$`, func(want string) error {
		if got := strings.Join(w.env.Creates(), " → "); got != want {
			return fmt.Errorf("the operator created %q, want %q", got, want)
		}
		return nil
	})
	sc.Then(`^the system received (\d+) strategy creates?$`, func(n int) error {
		if got := w.env.StrategyCreateRequests(); got != n {
			return fmt.Errorf("the system received %d strategy create(s), want %d; created %v", got, n, w.env.Creates())
		}
		return nil
	})
	sc.Then(`^the VIM holds no strategy$`, func() error {
		if typ, uuid, state, ok := w.env.ModelStrategy(); ok {
			return fmt.Errorf("the VIM holds a %s strategy %s that is %s", typ, uuid, state)
		}
		return nil
	})
	sc.Then(`^the VIM holds a (\S+) strategy that is (\S+)$`, func(typ, state string) error {
		gotTyp, _, gotState, ok := w.env.ModelStrategy()
		if !ok || gotTyp != typ || gotState != state {
			return fmt.Errorf("the VIM holds %q %q (exists %t), want a %s strategy that is %s", gotTyp, gotState, ok, typ, state)
		}
		return nil
	})
	sc.Then(`^the patch is refused with "([^"]*)"$`, func(msg string) error {
		if w.patchErr == nil {
			return fmt.Errorf("the patch was accepted, want it refused with %q", msg)
		}
		if !strings.Contains(w.patchErr.Error(), msg) {
			return fmt.Errorf("the patch was refused with %q, want %q", w.patchErr, msg)
		}
		return nil
	})
	sc.Then(`^the operator aborted the (sw-deploy|kube-upgrade) strategy and then deleted it$`, func(kind string) error {
		typ := strategyTypeOf(kind)
		var aborted string
		for _, c := range w.env.VIM.Calls() {
			switch {
			case c.Err != nil || string(c.Type) != typ:
			case c.Op == "abort":
				aborted = c.UUID
			case c.Op == "delete" && aborted != "" && c.UUID == aborted:
				return nil
			}
		}
		return fmt.Errorf("no abort of a %s strategy followed by its delete in the call log", typ)
	})
	sc.Then(`^the operator swacted (controller-\d) before it created the strategy of step (\d+)$`, func(host string, n int) error {
		step, err := w.planStep(n)
		if err != nil {
			return err
		}
		swacted := false
		target := strings.TrimPrefix(deployingOf(step), "k8s-")
		for _, c := range w.env.VIM.Calls() {
			switch {
			case c.Err != nil:
			case c.Op == "swact" && c.Target == host:
				swacted = true
			case c.Op == "create" && c.Target == target:
				if !swacted {
					return fmt.Errorf("the strategy of %s was created before a swact of %s", step, host)
				}
				return nil
			}
		}
		return fmt.Errorf("no strategy of %s was created", step)
	})
	sc.Then(`^after the restart the operator kept monitoring the same strategy until it was applied and deleted$`, func() error {
		return w.sameStrategyAfterRestart()
	})
}

// sameStrategyAfterRestart: the strategy the VIM held at the crash was
// applied and then deleted by the operator, and the operator created
// nothing in between.
func (w *world) sameStrategyAfterRestart() error {
	if w.crashUUID == "" {
		return fmt.Errorf("the VIM held no strategy when the operator crashed")
	}
	applied := false
	for _, e := range w.env.ModelEvents() {
		if e.Kind == starlingx.EventStrategyState && e.Subject == w.crashUUID && strings.HasSuffix(e.Detail, " applied") {
			applied = true
		}
	}
	if !applied {
		return fmt.Errorf("strategy %s (held at the crash) never reached applied", w.crashUUID)
	}
	for _, c := range w.env.VIM.Calls()[w.crashCalls:] {
		if c.Err != nil {
			continue
		}
		if c.Op == "create" {
			return fmt.Errorf("after the crash the operator created a strategy (%s %s) before deleting %s", c.Type, c.Target, w.crashUUID)
		}
		if c.Op == "delete" && c.UUID == w.crashUUID {
			return nil
		}
	}
	return fmt.Errorf("the operator never deleted strategy %s after the crash", w.crashUUID)
}
