package mutants

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// TestTwoStepsClaimsTheWorkerRolledRightAfterWritingIt: with the worker
// Upgrading, the mutant writes the worker and, on the verdict read before
// that write (the old template, rolled), moves the API to Upgrading in the
// same reconcile (v1alpha1: UpgradingAPI).
func TestTwoStepsClaimsTheWorkerRolledRightAfterWritingIt(t *testing.T) {
	u := &v1beta1.ApplicationUpgrade{}
	u.Generation, u.Status.ObservedGeneration, u.Status.Phase = 1, 1, v1beta1.PhaseProgressing
	u.Spec.Components = []v1beta1.Component{
		{Name: "worker", DeploymentRef: v1beta1.DeploymentReference{Name: "w"}, Image: "w:2"},
		{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "a"}, Image: "a:2", DependsOn: []string{"worker"}},
	}
	u.Status.Components = []v1beta1.ComponentStatus{{Name: "worker", Phase: v1beta1.ComponentUpgrading}, {Name: "api", Wave: 1, Phase: v1beta1.ComponentPending}}
	rolled := rollout.Verdict{State: rollout.Rolled}
	g := appupgrade.Graph{Upgrade: u, Components: []appupgrade.Component{
		{Spec: u.Spec.Components[0], Key: types.NamespacedName{Name: "w"}, Container: "w", Image: "w:1", Rollout: rolled},
		{Spec: u.Spec.Components[1], Key: types.NamespacedName{Name: "a"}, Container: "a", Image: "a:1", Rollout: rolled},
	}}
	product := appupgrade.Decide(g)
	assert.Equal(t, v1beta1.ComponentRollingOut, product.Components[0].Phase)
	assert.Equal(t, v1beta1.ComponentPending, product.Components[1].Phase)
	plan := twoSteps(g)
	assert.Equal(t, v1beta1.ComponentRolled, plan.Components[0].Phase)
	assert.Equal(t, v1beta1.ComponentUpgrading, plan.Components[1].Phase)
	assert.Equal(t, product.Writes, plan.Writes, "still one write: the worker's")
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
