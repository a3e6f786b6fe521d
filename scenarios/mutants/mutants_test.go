package mutants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// TestTwoStepsClaimsTheWorkerRolledRightAfterWritingIt: from UpgradingWorkers,
// the mutant writes the worker and, on the verdict read before that write
// (the old template, rolled), moves on to UpgradingAPI in the same reconcile.
func TestTwoStepsClaimsTheWorkerRolledRightAfterWritingIt(t *testing.T) {
	u := &v1.ApplicationUpgrade{}
	u.Generation, u.Status.ObservedGeneration, u.Status.Phase = 1, 1, v1.PhaseUpgradingWorkers
	u.Spec.Worker.Image, u.Spec.API.Image = "w:2", "a:2"
	rolled := rollout.Verdict{State: rollout.Rolled}
	s := appupgrade.State{Upgrade: u,
		Worker: appupgrade.Observed{Name: appupgrade.Worker, Spec: u.Spec.Worker, Key: types.NamespacedName{Name: "w"}, Container: "w", Image: "w:1", Rollout: rolled},
		API:    appupgrade.Observed{Name: appupgrade.API, Spec: u.Spec.API, Key: types.NamespacedName{Name: "a"}, Container: "a", Image: "a:1", Rollout: rolled}}
	product := appupgrade.Next(s)
	assert.Equal(t, v1.PhaseWaitingForWorkers, product.Phase)
	step := twoSteps(s)
	assert.Equal(t, v1.PhaseUpgradingAPI, step.Phase)
	assert.Equal(t, product.Write, step.Write, "still one write: the worker's")
}

func TestMutantsAreNamedAndFound(t *testing.T) {
	for _, m := range append(append([]Mutant(nil), All...), Equivalents...) {
		got, ok := ByName(m.Name())
		assert.True(t, ok, m.Name())
		assert.Equal(t, m.Description, got.Description)
		assert.NotNil(t, m.Policy.Customize, m.Name())
	}
	assert.Len(t, All, 4)
}
