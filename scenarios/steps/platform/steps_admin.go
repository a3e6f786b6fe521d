package platform

import (
	"fmt"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// registerAdmin registers what the system's administrator does on the
// StarlingX system itself, outside the operator (as sw-manager would):
// a sw-deploy strategy created, applied (whole, or only its first stage)
// and deleted on the system model.
func registerAdmin(sc *godog.ScenarioContext, w *world) {
	sc.When(`^the administrator deploys "([^"]*)" on the system with a sw-deploy strategy( and deletes it after its first stage)?$`,
		func(rel, firstOnly string) error {
			if _, err := w.upgrade(); err != nil {
				return err
			}
			return w.adminDeploy(rel, firstOnly != "")
		})
	sc.Then(`^the condition Ready says "([^"]*)"$`, func(text string) error {
		u, err := w.settle()
		if err != nil {
			return err
		}
		c := meta.FindStatusCondition(u.Status.Conditions, v1alpha1.ConditionReady)
		if c == nil || !strings.Contains(c.Message, text) {
			return fmt.Errorf("condition Ready is %v, want a message containing %q\n%s", c, text, w.describe())
		}
		return nil
	})
}

// adminDeploy creates a sw-upgrade strategy for rel on the model, applies
// it (only stage 0 when firstOnly) and deletes it (with force when it is
// paused after its first stage, as "sw-manager sw-deploy-strategy delete
// --force" would).
func (w *world) adminDeploy(rel string, firstOnly bool) error {
	req := starlingx.CreateRequest{Type: starlingx.SwUpgrade, ControllerApplyType: starlingx.ApplySerial,
		StorageApplyType: starlingx.ApplySerial, WorkerApplyType: starlingx.ApplySerial,
		DefaultInstanceAction: starlingx.InstanceStopStart, Releases: []string{rel}, Delete: true}
	var err error
	var uuid string
	w.env.WithModel(func(m *starlingx.System, now time.Time) {
		var st starlingx.Strategy
		st, err = m.CreateStrategy(now, req)
		uuid = st.UUID
	})
	if err != nil {
		return fmt.Errorf("the administrator's strategy create: %w", err)
	}
	if err := w.runUntil("the administrator's strategy to be built", 2*time.Hour, func() bool {
		return w.adminState() == starlingx.StateReadyToApply
	}); err != nil {
		return err
	}
	var stage *int
	if firstOnly {
		stage = new(int)
	}
	w.env.WithModel(func(m *starlingx.System, now time.Time) {
		_, err = m.ApplyStrategy(now, starlingx.SwUpgrade, uuid, stage)
	})
	if err != nil {
		return fmt.Errorf("the administrator's strategy apply: %w", err)
	}
	done := func() bool {
		if firstOnly {
			return w.deployState() == starlingx.DeployStartDone
		}
		return w.adminState() == starlingx.StateApplied
	}
	if err := w.runUntil("the administrator's strategy to run", 6*time.Hour, done); err != nil {
		return err
	}
	w.env.WithModel(func(m *starlingx.System, now time.Time) {
		err = m.DeleteStrategy(now, starlingx.SwUpgrade, uuid, firstOnly)
	})
	if err != nil {
		return fmt.Errorf("the administrator's strategy delete: %w", err)
	}
	return nil
}

func (w *world) adminState() starlingx.StrategyState {
	var out starlingx.StrategyState
	w.env.WithModel(func(m *starlingx.System, now time.Time) {
		if st, ok := m.Strategy(now, starlingx.SwUpgrade); ok {
			out = st.State
		}
	})
	return out
}
