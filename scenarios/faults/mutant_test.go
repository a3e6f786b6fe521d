package faults_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/mutants"
	"github.com/lunadas/upgrade-operator/scenarios/shrink"
)

// noOptimisticLock writes images with a plain merge patch: the
// resourceVersion the decision was based on is dropped. Harmless while
// reads are fresh; with a stale cache the operator writes an image the
// Deployment already has — a duplicate write — which only a fault shows.
func noOptimisticLock(r *controller.ApplicationUpgradeReconciler) {
	r.Client = unlocked{r.Client}
}

type unlocked struct{ client.Client }

func (u unlocked) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "resourceVersion")
		if len(md) == 0 {
			delete(m, "metadata")
		}
	}
	if data, err = json.Marshal(m); err != nil {
		return err
	}
	return u.Client.Patch(ctx, obj, client.RawPatch(patch.Type(), data), opts...)
}

// Apply drops the resourceVersion of the operator's image apply, as Patch
// drops it from a merge patch.
func (u unlocked) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	if ac, ok := obj.(*appsv1ac.DeploymentApplyConfiguration); ok {
		ac.ResourceVersion = nil
	}
	return u.Client.Apply(ctx, obj, opts...)
}

// firstFailure runs seeds 1..1000 with mutant until a run fails.
func firstFailure(t *testing.T, mutant func(*controller.ApplicationUpgradeReconciler)) faults.Summary {
	t.Helper()
	sums := faults.RunBatch(context.Background(), faults.BatchConfig{From: 1, N: 1000, Reconciler: mutant, StopAtFirstFailure: true})
	// every seed below a failing one has run: the first failure is deterministic
	for _, s := range sums {
		if s.Failed() {
			return s
		}
	}
	require.FailNow(t, "mutant not caught", "%d seeds", len(sums))
	return faults.Summary{}
}

func TestCountersOnlyMutantCaughtWithin1000Seeds(t *testing.T) {
	s := firstFailure(t, mutants.CountersOnly.Policy.Customize)
	assert.LessOrEqual(t, s.Schedule.Seed, int64(1000))
	assert.Equal(t, "ordering violation", s.FailureClass(), "%v", s.Violations)
	t.Logf("caught at %s: %s", s.Schedule, s.Violations[0])
}

// TestShrinkerReducesAFaultOnlyBug: the no-optimistic-lock mutant passes
// undisturbed runs and fails only when its cache is stale; the first
// failing seed's schedule shrinks to that one fault, and the product
// passes the shrunk schedule.
func TestShrinkerReducesAFaultOnlyBug(t *testing.T) {
	ctx := context.Background()
	for _, name := range faults.ScenarioNames() {
		o := faults.Run(ctx, faults.RunConfig{Schedule: faults.Schedule{Seed: 1, Scenario: name}, Reconciler: noOptimisticLock})
		require.False(t, o.Failed(), "%s undisturbed: %v", name, o.Violations)
	}
	s := firstFailure(t, noOptimisticLock)
	class := s.FailureClass()
	res := shrink.Shrink(s.Schedule, func(c faults.Schedule) bool {
		return faults.Run(ctx, faults.RunConfig{Schedule: c, Reconciler: noOptimisticLock}).FailureClass() == class
	})
	t.Logf("seed %d: %s (%s) shrunk in %d runs to: %s", s.Schedule.Seed, s.Schedule.Spec(), class, res.Runs, res.Schedule.Command())
	require.Len(t, res.Schedule.Faults, 1, "one fault is enough: %s", res.Schedule.Spec())
	assert.Equal(t, faults.Stale, res.Schedule.Faults[0].Kind)
	again := faults.Run(ctx, faults.RunConfig{Schedule: res.Schedule, Reconciler: noOptimisticLock})
	assert.Equal(t, class, again.FailureClass(), "the shrunk schedule replays the failure")
	product := faults.Run(ctx, faults.RunConfig{Schedule: res.Schedule})
	assert.False(t, product.Failed(), "the product passes it: %s", strings.Join(product.Violations, "; "))
}
