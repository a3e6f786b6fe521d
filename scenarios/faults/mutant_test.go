package faults_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/faults/mutants"
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
	assert.True(t, slices.ContainsFunc(s.Violations, func(v string) bool { return strings.HasPrefix(v, "porcupine: history is Illegal") }),
		"the one judge's model catches it too: %v", s.Violations)
	t.Logf("caught at %s: %s", s.Schedule, s.Violations[0])
}

// TestAnyDependencyMutantCaughtBySeedsOnTheDiamond: the batch of
// `simulate --seeds` over the diamond graph catches the any-dependency
// mutant through the one judge (porcupine and the per-edge ordering).
func TestAnyDependencyMutantCaughtBySeedsOnTheDiamond(t *testing.T) {
	sums := faults.RunBatch(context.Background(), faults.BatchConfig{From: 1, N: 200, Scenarios: []string{"graph-diamond"},
		Reconciler: mutants.AnyDependency.Policy.Customize, StopAtFirstFailure: true})
	i := slices.IndexFunc(sums, faults.Summary.Failed)
	require.GreaterOrEqual(t, i, 0, "not caught in %d seeds", len(sums))
	s := sums[i]
	assert.Equal(t, "ordering violation", s.FailureClass(), "%v", s.Violations)
	assert.True(t, slices.ContainsFunc(s.Violations, func(v string) bool {
		return strings.HasPrefix(v, "porcupine: history is Illegal") && strings.Contains(v, "is not fully rolled out")
	}), "%v", s.Violations)
	t.Logf("caught at %s: %s", s.Schedule, s.Violations[0])
}

// TestEarlyCompletedMutantCaughtBySeeds: a reconciler whose writes are
// all in order but which claims Completed as soon as the last image is
// written passes an event-log judge; `simulate --seeds` records the
// operator's calls, so the one judge's porcupine model catches the claim
// on the first seed.
func TestEarlyCompletedMutantCaughtBySeeds(t *testing.T) {
	s := firstFailure(t, mutants.EarlyCompleted.Policy.Customize)
	assert.Equal(t, int64(1), s.Schedule.Seed, "%v", s.Violations)
	assert.True(t, slices.ContainsFunc(s.Violations, func(v string) bool {
		return strings.HasPrefix(v, "porcupine: history is Illegal") && strings.Contains(v, "claimed while")
	}), "%v", s.Violations)
	t.Logf("caught at %s: %s", s.Schedule, s.Violations[0])
}

// TestShrinkerReducesAFaultOnlyBug: the no-optimistic-lock mutant passes
// undisturbed runs and fails only when its cache is stale. A failing
// three-fault schedule (the first found by a batch of seeds with the
// mutant: seed 240, scenario single) shrinks to a 1-minimal schedule — fewer
// faults, a stale cache among them, and removing any one fault loses the
// failure — and the product passes the shrunk schedule.
func TestShrinkerReducesAFaultOnlyBug(t *testing.T) {
	ctx := context.Background()
	for _, name := range faults.ScenarioNames() {
		o := faults.Run(ctx, faults.RunConfig{Schedule: faults.Schedule{Seed: 1, Scenario: name}, Reconciler: noOptimisticLock})
		require.False(t, o.Failed(), "%s undisturbed: %v", name, o.Violations)
	}
	fs, err := faults.ParseFaults("stale@18.563s:for=48s:lag=3.695s:kind=deployments,lease-lost@50.711s:for=9s,ambiguous@4:n=5")
	require.NoError(t, err)
	s := faults.Run(ctx, faults.RunConfig{Schedule: faults.Schedule{Seed: 240, Scenario: "single", Faults: fs}, Reconciler: noOptimisticLock})
	require.True(t, s.Failed(), "the schedule no longer fails the mutant: pick another from `simulate --seeds` with it")
	class := s.FailureClass()
	fails := func(c faults.Schedule) bool {
		return faults.Run(ctx, faults.RunConfig{Schedule: c, Reconciler: noOptimisticLock}).FailureClass() == class
	}
	res := faults.Shrink(s.Schedule, fails)
	t.Logf("%s (%s) shrunk in %d runs to: %s", s.Schedule.Spec(), class, res.Runs, res.Schedule.Command())
	require.Less(t, len(res.Schedule.Faults), len(fs), "shrunk: %s", res.Schedule.Spec())
	require.True(t, slices.ContainsFunc(res.Schedule.Faults, func(f faults.Fault) bool { return f.Kind == faults.Stale }),
		"a stale cache is the bug's cause: %s", res.Schedule.Spec())
	for i := range res.Schedule.Faults {
		fewer := res.Schedule
		fewer.Faults = slices.Delete(slices.Clone(fewer.Faults), i, i+1)
		assert.False(t, fails(fewer), "not 1-minimal: still fails without fault %d: %s", i, fewer.Spec())
	}
	assert.True(t, fails(res.Schedule), "the shrunk schedule replays the failure")
	product := faults.Run(ctx, faults.RunConfig{Schedule: res.Schedule})
	assert.False(t, product.Failed(), "the product passes it: %s", strings.Join(product.Violations, "; "))
}

// TestNoLeaseGuardMutantCaughtByAPausedLeader: under the schedule the
// product passes (TestPausedLeaderWritesNothingAfterTheStandbyTookOver:
// the leader paused 30 s mid-upgrade, a standby present), a reconciler
// without the lease guard — LeaseHeld always nil, the operator before
// manager.LeaseGuard — writes on resume while the standby holds the
// lease: the one-writer check of the verdict catches it, and the write
// attribution names the resumed incarnation.
func TestNoLeaseGuardMutantCaughtByAPausedLeader(t *testing.T) {
	fs, err := faults.ParseFaults("pause@8s:for=30s")
	require.NoError(t, err)
	s := faults.Schedule{Seed: 2, Scenario: "demo", Faults: fs}
	product := faults.Run(context.Background(), faults.RunConfig{Schedule: s})
	require.False(t, product.Failed(), "the product passes: %v", product.Violations)

	o := faults.Run(context.Background(), faults.RunConfig{Schedule: s, Reconciler: mutants.NoLeaseGuard.Policy.Customize})
	require.True(t, o.Failed(), "the mutant is not caught")
	assert.True(t, slices.ContainsFunc(o.Violations, func(v string) bool {
		return strings.HasPrefix(v, "two writers: operator-0_1 wrote") && strings.Contains(v, "while the lease is held by operator-1_1")
	}), "%v", o.Violations)
	var resumed time.Duration
	for _, f := range o.Fired {
		if f.Note == "operator-0 resumes" {
			resumed = f.Start
		}
	}
	require.Positive(t, resumed)
	assert.True(t, slices.ContainsFunc(o.WriteCalls, func(w faults.WriteCall) bool {
		return w.Identity == "operator-0_1" && w.At >= resumed && w.At < resumed+10*time.Second
	}), "a write by the resumed leader within its renew deadline: %+v", o.WriteCalls)
	t.Logf("caught: %s", o.Violations[0])
}
