package app

import (
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lunadas/upgrade-operator/scenarios/faults/mutants"
)

var allMutantScenarios = flag.Bool("mutants.all", false, "run every C01–C04 scenario against each mutant instead of stopping at the first catch")

// TestMutants proves on the simulator that the checks can fail: every
// mutant of mutants.All must be caught by a C01–C04 scenario, and the
// equivalent mutants (masked by the product's other guards) must pass.
func TestMutants(t *testing.T) {
	base := Config{Backend: SimBackend{}, Seed: *seed, Context: t.Context()}
	results := RunMutants(base, append(append([]mutants.Mutant(nil), mutants.All...), mutants.Equivalents...), !*allMutantScenarios && !testing.Verbose())
	WriteMutantTable(os.Stdout, "sim", results)
	judgeMutants(t, results)
	checkLogAloneJudge(t, base, results)
}

func judgeMutants(t *testing.T, results []MutantResult) {
	t.Helper()
	for _, r := range results {
		if broken := r.Broken(); len(broken) > 0 {
			t.Errorf("mutant %s: runs broke during setup (not a catch): %v", r.Mutant.Name(), broken)
		}
		switch {
		case r.Mutant.Equivalent && r.Caught():
			t.Errorf("equivalent mutant %s was flagged: a check fails on a safe operator", r.Mutant.Name())
		case !r.Mutant.Equivalent && !r.Caught():
			t.Errorf("mutant %s survived C01–C04: no check caught it", r.Mutant.Name())
		}
		if len(r.Outcomes) == 0 {
			t.Errorf("mutant %s: no scenario ran", r.Mutant.Name())
		}
	}
}

// TestSidecarWorkerCatchesCountersOnly: on the worker whose pods list a
// proxy first (@sidecar), the counters-only mutant writes the API while
// old worker pods still run, and that scenario alone catches it — the
// ordering is judged by pod-template-hash, not by the first container.
func TestSidecarWorkerCatchesCountersOnly(t *testing.T) {
	base := Config{Backend: SimBackend{}, Seed: *seed, Context: t.Context(), Tags: "@sidecar"}
	results := RunMutants(base, []mutants.Mutant{mutants.CountersOnly}, false)
	WriteMutantTable(os.Stdout, "sim", results)
	if len(results) != 1 || len(results[0].Outcomes) != 1 {
		t.Fatalf("want one mutant run of one scenario, got %+v", results)
	}
	if o := results[0].Outcomes[0]; o.Passed || o.Stage == "setup" {
		t.Fatalf("counters-only survived the sidecar-first worker: %+v", o)
	}
}

// TestWorkloadKindMutants runs the @kinds scenarios (StatefulSet and
// DaemonSet callees, features/workload_kinds.feature) against the
// counters-only and ignore-terminating mutants, every scenario each, and
// prints which scenario catches which: every mutant must be caught by
// at least one scenario, and no run may break during setup.
func TestWorkloadKindMutants(t *testing.T) {
	base := Config{Backend: SimBackend{}, Seed: *seed, Context: t.Context(), Tags: "@kinds"}
	results := RunMutants(base, []mutants.Mutant{mutants.CountersOnly, mutants.IgnoreTerminatingPods}, false)
	WriteMutantTable(os.Stdout, "sim", results)
	judgeMutants(t, results)
	checkLogAloneJudge(t, base, results)
}

// TestInformerFaultMutants runs the @informer scenarios (stale and drop
// through make simulate's informer model, features/informer_faults.feature)
// against every mutant and the equivalent one: each mutant must be caught
// by at least one of them while the operator's cache lags or loses
// events (counters-only by a stale scenario: "4 events behind"), the
// equivalent must pass them all, and the judge of the event log alone
// must agree.
func TestInformerFaultMutants(t *testing.T) {
	base := Config{Backend: SimBackend{}, Seed: *seed, Context: t.Context(), Tags: "@informer"}
	results := RunMutants(base, append(append([]mutants.Mutant(nil), mutants.All...), mutants.Equivalents...), false)
	WriteMutantTable(os.Stdout, "sim", results)
	judgeMutants(t, results)
	checkLogAloneJudge(t, base, results)
}

// TestNoLeaseGuardMutantCaughtByThePausedLeader: the C10 scenario whose
// leader is paused past its lease (@sim-only, the fault pause) passes the
// product (TestFeatures) and catches the reconciler without the lease
// guard: once resumed, its leader writes while the standby holds the
// Lease, and the replicas' write attribution names it. The scenarios
// whose leader's network stalls do not: a stalled leader's clock runs on
// and it steps down on time — the gap the pause fault closes.
func TestNoLeaseGuardMutantCaughtByThePausedLeader(t *testing.T) {
	m := mutants.NoLeaseGuard
	// not RunMutants: these scenarios are C10's, not the @mutants ones
	_, outcomes := Run(Config{Backend: SimBackend{}, Seed: *seed, Context: t.Context(), Tags: "@C10",
		Policy: m.Policy, ExpectFailures: true, Output: io.Discard})
	WriteMutantTable(os.Stdout, "sim", []MutantResult{{Mutant: m, Outcomes: outcomes}})
	var paused, stalled int
	for _, o := range outcomes {
		switch {
		case strings.Contains(o.Scenario, "is paused past its lease"):
			paused++
			assert.False(t, o.Passed, "%s: the mutant passed", o.Scenario)
			assert.Equal(t, "step", o.Stage, "%s: %s", o.Scenario, o.Err)
			assert.Contains(t, o.Step, "came from the replica holding the lease", o.Scenario)
			assert.Contains(t, o.Err, "replica 0 wrote", o.Scenario)
		default:
			stalled++
			assert.True(t, o.Passed, "%s: a stalled leader steps down on time, guard or not: %s", o.Scenario, o.Err)
		}
	}
	assert.Equal(t, 1, paused, "the paused-leader scenario ran")
	assert.Positive(t, stalled)
}
