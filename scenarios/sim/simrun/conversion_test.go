package simrun

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// TestDemoIsStoredAtV1beta1: the demo upgrade, created and reconciled at
// ObservedVersion, is one object served at both versions (simapi.go wires
// the conversion): read at v1beta1 it is the worker → api graph, rolled.
func TestDemoIsStoredAtV1beta1(t *testing.T) {
	const seed = 1
	ctx := context.Background()
	env, err := NewEnv(ctx, Config{Seed: seed})
	require.NoError(t, err)
	app, upgrades := splitUpgrades(demoObjects(t))
	require.NoError(t, env.Create(ctx, app))
	require.NoError(t, env.RunUntilRolledOut(ctx, time.Hour))
	require.NoError(t, env.Create(ctx, upgrades))
	c := env.Sim.Client()
	done := func() bool {
		var l upgradesv1beta1.ApplicationUpgradeList
		return c.List(ctx, &l) == nil && len(l.Items) > 0 && l.Items[0].Status.Phase.Terminal()
	}
	require.NoError(t, env.RunUntil(ctx, "the upgrade finished (read at v1beta1)", done, time.Hour),
		"seed %d (replay: go test ./scenarios/sim/simrun -run TestDemoIsStoredAtV1beta1)", seed)

	var beta upgradesv1beta1.ApplicationUpgradeList
	require.NoError(t, c.List(ctx, &beta))
	require.Len(t, beta.Items, 1)
	u := beta.Items[0]
	assert.Equal(t, upgradesv1beta1.PhaseCompleted, u.Status.Phase)
	require.Len(t, u.Spec.Components, 2)
	assert.Equal(t, upgradesv1alpha1.WorkerComponent, u.Spec.Components[0].Name)
	assert.Equal(t, []string{upgradesv1alpha1.WorkerComponent}, u.Spec.Components[1].DependsOn)
	require.Len(t, u.Status.Components, 2)
	for _, cs := range u.Status.Components {
		assert.Equal(t, upgradesv1beta1.ComponentRolled, cs.Phase, "component %s", cs.Name)
	}

	var alpha upgradesv1alpha1.ApplicationUpgrade
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(&u), &alpha))
	assert.Equal(t, upgradesv1alpha1.PhaseCompleted, alpha.Status.Phase)
	assert.Equal(t, u.ResourceVersion, alpha.ResourceVersion, "one object, one resourceVersion")
	assert.Equal(t, u.Generation, alpha.Status.ObservedGeneration)
}
