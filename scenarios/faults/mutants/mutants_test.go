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
	for _, m := range append(append(append([]Mutant(nil), All...), Equivalents...), FaultOnly...) {
		got, ok := ByName(m.Name())
		assert.True(t, ok, m.Name())
		assert.Equal(t, m.Description, got.Description)
		assert.NotNil(t, m.Policy.Customize, m.Name())
	}
	assert.Len(t, All, 6)
}

// TestAnyDependencyWritesTheCallerOfAHalfRolledDiamond: db ← {worker,
// indexer} ← api with the worker Rolled and the indexer still rolling
// out. The product keeps api Pending; the mutant decides it Upgrading and,
// a pass later, writes it.
func TestAnyDependencyWritesTheCallerOfAHalfRolledDiamond(t *testing.T) {
	u := &v1beta1.ApplicationUpgrade{}
	u.Generation, u.Status.ObservedGeneration, u.Status.Phase = 1, 1, v1beta1.PhaseProgressing
	comp := func(name string, deps ...string) v1beta1.Component {
		return v1beta1.Component{Name: name, DeploymentRef: v1beta1.DeploymentReference{Name: name}, Image: name + ":2", DependsOn: deps}
	}
	u.Spec.Components = []v1beta1.Component{comp("db"), comp("worker", "db"), comp("indexer", "db"), comp("api", "worker", "indexer")}
	u.Status.Components = []v1beta1.ComponentStatus{{Name: "db", Phase: v1beta1.ComponentRolled}, {Name: "worker", Wave: 1, Phase: v1beta1.ComponentRolled},
		{Name: "indexer", Wave: 1, Phase: v1beta1.ComponentRollingOut}, {Name: "api", Wave: 2, Phase: v1beta1.ComponentPending}}
	rolled, rolling := rollout.Verdict{State: rollout.Rolled}, rollout.Verdict{State: rollout.Progressing}
	g := appupgrade.Graph{Upgrade: u}
	for _, c := range u.Spec.Components {
		v, img := rolled, c.Name+":2"
		if c.Name == "indexer" {
			v = rolling
		}
		if c.Name == "api" {
			img = "api:1"
		}
		g.Components = append(g.Components, appupgrade.Component{Spec: c, Key: types.NamespacedName{Name: c.Name}, Container: "app", Image: img, Rollout: v})
	}
	assert.Equal(t, v1beta1.ComponentPending, appupgrade.Decide(g).Components[3].Phase)
	plan := anyDependency(g)
	assert.Equal(t, v1beta1.ComponentUpgrading, plan.Components[3].Phase)
	assert.Equal(t, []string{"worker", "indexer"}, g.Upgrade.Spec.Components[3].DependsOn, "the input is not modified")

	u.Status.Components[3].Phase = v1beta1.ComponentUpgrading
	plan = anyDependency(g)
	if assert.Len(t, plan.Writes, 1) {
		assert.Equal(t, "api", plan.Writes[0].Component)
	}
	assert.Empty(t, appupgrade.Decide(g).Writes, "the product does not write api")
}
