package faults

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/sim/simrun"
	"github.com/lunadas/upgrade-operator/simulator"
)

func run(t *testing.T, seed int64, scenario, spec string) (*Outcome, string, string) {
	t.Helper()
	fs, err := ParseFaults(spec)
	require.NoError(t, err)
	var tr, ev bytes.Buffer
	o := Run(context.Background(), RunConfig{Schedule: Schedule{Seed: seed, Scenario: scenario, Faults: fs}, Transcript: &tr, EventLog: &ev})
	require.NoError(t, o.Err)
	return o, tr.String(), ev.String()
}

func requireOK(t *testing.T, o *Outcome, transcript string) {
	t.Helper()
	if o.Failed() {
		t.Fatalf("%s failed:\n%s\n\n%s", o.Schedule, strings.Join(o.Violations, "\n"), transcript)
	}
}

// TestSeededSchedulesReplayByteForByte: the schedule of a seed, run twice,
// gives the same transcript (fault lines included) and event log.
func TestSeededSchedulesReplayByteForByte(t *testing.T) {
	// stale, slow + respec + webhook, crash + pause, kcm lag + delete,
	// crash + gitops + drop, lease-lost
	kinds := map[Kind]bool{}
	for _, seed := range []int64{4, 6, 12, 23, 26, 31} {
		s := Generate(seed, ScenarioNames())
		for _, f := range s.Faults {
			kinds[f.Kind] = true
		}
		var tr1, ev1, tr2, ev2 bytes.Buffer
		o1 := Run(context.Background(), RunConfig{Schedule: s, Transcript: &tr1, EventLog: &ev1})
		Run(context.Background(), RunConfig{Schedule: s, Transcript: &tr2, EventLog: &ev2})
		requireOK(t, o1, tr1.String())
		assert.NotEmpty(t, s.Faults, "seed %d", seed)
		assert.Equal(t, tr1.String(), tr2.String(), "seed %d transcript", seed)
		assert.Equal(t, ev1.String(), ev2.String(), "seed %d event log", seed)
		assert.Contains(t, tr1.String(), "fault ", "seed %d: the transcript shows the faults", seed)
	}
	assert.True(t, kinds[Pause] && kinds[LeaseLost], "the seeds replay both leader faults: %v", kinds)
}

// C08: every write of the operator conflicts for the first 5 attempts.
func TestConflictsConvergeWithoutDuplicateWritesOrHotLoop(t *testing.T) {
	o, tr, _ := run(t, 1, "demo", "conflict@1:n=5")
	requireOK(t, o, tr)
	assert.Equal(t, ExpectCompleted, o.ExpectedState())
	assert.Len(t, o.Writes, 2, "worker and API written once each: %v", o.Writes)
	base, _, _ := run(t, 1, "demo", "none")
	assert.Less(t, o.Calls, base.Calls+60, "retries back off instead of looping")
}

// An ambiguous write: the worker patch is applied but the operator sees a
// timeout; it must not write again.
func TestAmbiguousWorkerWriteIsNotRepeated(t *testing.T) {
	base, _, _ := run(t, 1, "demo", "none")
	require.NotEmpty(t, base.Writes)
	for n := 1; n <= 12; n++ {
		o, tr, _ := run(t, 1, "demo", "ambiguous@"+strconv.Itoa(n)+":n=3")
		requireOK(t, o, tr)
		assert.Len(t, o.Writes, 2, "ambiguous@%d: %v", n, o.Writes)
	}
}

func TestCacheFaults(t *testing.T) {
	for _, spec := range []string{
		"stale@0s:for=60s:lag=8s",
		"stale@0s:for=60s:events=4:kind=pods",
		"stale@5s:for=30s:lag=3s:kind=deployments",
		"drop@0s:for=40s",
		"drop@10s:for=15s:kind=pods",
		"drop@3s:for=30s:kind=upgrades,stale@0s:for=60s:lag=2s:kind=replicasets",
	} {
		o, tr, _ := run(t, 3, "demo", spec)
		requireOK(t, o, tr)
		assert.Equal(t, ExpectCompleted, o.ExpectedState(), spec)
		assert.Len(t, o.Writes, 2, spec)
	}
}

// C09 in small: crashes at times and at calls, the operator restarts cold.
func TestCrashesResume(t *testing.T) {
	o, tr, _ := run(t, 5, "demo", "crash@3,crash@10s:down=5s,crash@40,crash@30s:down=100ms")
	requireOK(t, o, tr)
	assert.Contains(t, tr, "operator-0 killed, restarts in 5s with a cold cache")
	assert.Len(t, o.Writes, 2)
}

// C10: the leader's network stalls past the lease: the other replica takes
// over, and every write is made by the holder of an unexpired lease.
func TestLeaseLostHandsOver(t *testing.T) {
	o, tr, _ := run(t, 2, "demo", "lease-lost@8s:for=30s")
	requireOK(t, o, tr)
	assert.Contains(t, tr, "operator-0 failed to renew the lease for 10s: leader election lost")
	assert.Contains(t, tr, "operator-1 acquired the lease")
	var by []string
	for _, w := range o.Writes {
		by = append(by, w.Process)
	}
	assert.Contains(t, by, "operator-1", "the new leader finished the upgrade: %v", o.Writes)
	short, tr2, _ := run(t, 2, "demo", "lease-lost@8s:for=5s")
	requireOK(t, short, tr2)
	assert.NotContains(t, tr2, "acquired the lease", "a stall shorter than the renew deadline keeps the leader")
}

// C10, the process pause: the leader is stopped (SIGSTOP) for 30 s, past
// its 15 s lease, mid-upgrade; the standby takes the lease while it is
// stopped. On resume its elector still believes it leads until its renew
// poll's deadline, 10 s later (client-go), and its controller reconciles
// at once — but its lease guard (manager.RenewalHeld over its last own
// renewal) stops every pass: no write attempt by the resumed incarnation
// after the standby took over, no ordering violation, and the upgrade
// completes under the new leader. With informers too (a drop turns the
// cache model on; a paused process's informers stop with it, and the
// resumed reconcile reads the cache as it was).
func TestPausedLeaderWritesNothingAfterTheStandbyTookOver(t *testing.T) {
	for _, spec := range []string{"pause@8s:for=30s", "drop@0s:for=1s,pause@8s:for=30s"} {
		o, tr, _ := run(t, 2, "demo", spec)
		requireOK(t, o, tr)
		assert.Equal(t, ExpectCompleted, o.ExpectedState(), spec)
		for k, rep := range o.Result.Reports {
			assert.Empty(t, rep.Violations, "%s: ordering of %s", spec, k)
		}
		marks := map[string]time.Duration{}
		var paused time.Duration
		for _, f := range o.Fired {
			if f.Fault.Kind == Pause {
				paused = f.Start
			}
			if _, seen := marks[f.Note]; f.Fault.Kind == "" && !seen {
				marks[f.Note] = f.Start
			}
		}
		took, resumed, lost := marks["operator-1 leads"], marks["operator-0 resumes"], marks["operator-0 lost the lease"]
		require.True(t, paused > 0 && paused < took && took < resumed && resumed < lost, "%s: paused %s, standby leads %s, resumed %s, lost %s\n%s", spec, paused, took, resumed, lost, tr)
		assert.Equal(t, resumed+simulator.DefaultRenewDeadline, lost, "%s: the resumed leader leads on until its renew poll's deadline", spec)
		assert.Contains(t, tr, "operator-0 resumes; it last renewed the lease")
		var zombie, standby int
		for _, w := range o.WriteCalls {
			switch {
			case w.Identity == "operator-0_1" && w.At >= paused:
				zombie++
				t.Errorf("%s: the paused leader wrote at %s (paused at %s, standby leads from %s): %+v", spec, w.At, paused, took, w)
			case w.Identity == "operator-1_1":
				standby++
			}
		}
		assert.Zero(t, zombie, spec)
		assert.Positive(t, standby, "%s: the standby carried on", spec)
		for _, w := range o.Writes {
			assert.False(t, w.Process == "operator-0" && w.At >= paused, "%s: image write by the paused leader: %+v", spec, w)
		}
	}
}

func TestImageFaultsDemandFailed(t *testing.T) {
	for spec, reason := range map[string]string{
		"bad-image":              "WorkerRolloutFailed",
		"crashloop:dep=api":      "APIRolloutFailed",
		"never-ready:dep=worker": "WorkerRolloutFailed",
	} {
		o, tr, _ := run(t, 1, "demo", spec)
		requireOK(t, o, tr)
		assert.Equal(t, ExpectFailed, o.ExpectedState(), spec)
		assert.Equal(t, reason, o.Expected["job-system/upgrade-v2"].Reason, spec)
	}
	o, tr, _ := run(t, 1, "demo", "never-ready,respec@20s")
	requireOK(t, o, tr)
	assert.Equal(t, ExpectCompleted, o.ExpectedState(), "the images changed again to good ones")
	assert.Equal(t, "registry.example.com/job-api:v3.0.0", o.Result.Upgrades[0].Status.API.Image)
}

func TestClusterActors(t *testing.T) {
	for _, spec := range []string{
		"node-lost@15s",
		"scale@10s:replicas=5,scale@20s:dep=api:replicas=1",
		"edit@5s:field=labels,edit@12s:field=annotations,edit@20s:dep=api:field=restart,edit@25s:field=replicas",
		"respec@30s:dep=worker",
		"delete@20s:recreate=10s",
		"respec@1s,delete@40s:recreate=5s", // v2, v3, then v2 again: no duplicate
		"kcm-lag@0s:for=40s:lag=4s",
		"slow:ready=50s:exit=25s",
	} {
		o, tr, _ := run(t, 7, "demo", spec)
		requireOK(t, o, tr)
		assert.Equal(t, ExpectCompleted, o.ExpectedState(), spec)
	}
	o, tr, _ := run(t, 7, "demo", "node-lost@15s")
	assert.Regexp(t, `node kwok-node-0 lost: [1-9]\d* pods deleted`, tr)
	assert.Equal(t, ExpectCompleted, o.ExpectedState())
}

func TestDeletedUpgradeStopsTheOperator(t *testing.T) {
	o, tr, _ := run(t, 1, "demo", "delete@15s")
	requireOK(t, o, tr)
	assert.Equal(t, ExpectDeleted, o.ExpectedState())
	assert.Empty(t, o.Result.Upgrades)
	for _, w := range o.Writes {
		assert.Less(t, w.At.Seconds(), o.Start.Seconds()+15+deleteSettle.Seconds(), "write after deletion: %+v", w)
	}
}

func TestEveryScenarioCompletesUndisturbed(t *testing.T) {
	for _, name := range ScenarioNames() {
		o, tr, _ := run(t, 1, name, "none")
		requireOK(t, o, tr)
		assert.Equal(t, ExpectCompleted, o.ExpectedState(), name)
	}
}

// TestOneWriterCheckCatchesAZombieLeader: a replica that keeps working
// after losing its lease is caught writing without it (its lease guard
// off: the guard alone would stop it writing).
func TestOneWriterCheckCatchesAZombieLeader(t *testing.T) {
	objs, err := demo()
	require.NoError(t, err)
	fs, err := ParseFaults("lease-lost@8s:for=20s")
	require.NoError(t, err)
	s := Schedule{Seed: 2, Scenario: "demo", Faults: fs}
	objs = Prepare(objs, s.Faults)
	in := NewInjector(s, objs, nil)
	in.zombieLeaders = true
	unguarded := func(r *controller.ApplicationUpgradeReconciler) { r.LeaseHeld = func() error { return nil } }
	_, err = simrun.Run(context.Background(), simrun.Config{Objects: objs, Seed: s.Seed, Limit: DefaultLimit, Faults: in, Reconciler: unguarded})
	require.NoError(t, err)
	require.NotEmpty(t, in.errs)
	assert.Contains(t, in.errs[0], "two writers: operator-0_1 wrote")
}

// TestWebhookDownRefusesUpgradeWrites: while the validating webhook is
// down, a user's change of the upgrade fails with the API server's
// "failed calling webhook" and changes nothing — the run ends Completed
// with the original targets; the operator's own progress (status writes,
// workload writes) does not go through the webhook, on a graph too.
func TestWebhookDownRefusesUpgradeWrites(t *testing.T) {
	o, tr, _ := run(t, 1, "demo", "webhook-down@1s:for=60s,respec@10s")
	requireOK(t, o, tr)
	assert.Equal(t, ExpectCompleted, o.ExpectedState())
	var notes []string
	for _, f := range o.Fired {
		notes = append(notes, f.Note)
	}
	assert.Contains(t, strings.Join(notes, "\n"), `change failed: Internal error occurred: failed calling webhook "vapplicationupgrade.upgrades.lunadas.dev"`)
	for _, u := range o.Result.Upgrades {
		assert.Equal(t, "registry.example.com/job-api:v2.0.0", u.Spec.API.Image, "the respec never landed")
	}

	g, tr, _ := run(t, 1, "graph-mixed", "webhook-down@0s:for=90s")
	requireOK(t, g, tr)
	assert.Equal(t, ExpectCompleted, g.ExpectedState())
}

// TestWideWaveIsNoHotLoop: the four-component wave of graph-wide, written
// at one instant with ambiguous writes, makes over 300 uncached calls at
// that instant and then settles — a hot loop only by the two-component
// limit, which scales with the components (seed 362 of --seeds 2000).
func TestWideWaveIsNoHotLoop(t *testing.T) {
	o, tr, _ := run(t, 362, "graph-wide", "ambiguous@45:n=3")
	requireOK(t, o, tr)
	assert.Equal(t, ExpectCompleted, o.ExpectedState())
}

// TestReapplyRefusedByTheWebhookLeavesTheUpgradeDeleted: a re-apply
// (delete:recreate) that the webhook refuses leaves the upgrade deleted,
// and the run ends as after a deletion instead of running to its time
// limit (seed 331 of --seeds 2000, graph-wide).
func TestReapplyRefusedByTheWebhookLeavesTheUpgradeDeleted(t *testing.T) {
	o, tr, _ := run(t, 331, "graph-wide", "slow:dep=db:ready=15s:exit=20s,webhook-down@1m1.421s:for=17s,delete@39.961s:recreate=22s")
	requireOK(t, o, tr)
	assert.Equal(t, ExpectDeleted, o.ExpectedState())
	assert.Contains(t, tr, "the re-apply of upgrade shop/shop-v3 failed: Internal error occurred: failed calling webhook")
}
