package judge

import (
	"slices"
	"strconv"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// diamond: db ← {worker, indexer} ← api, each Deployment named after its component.
var diamond = &UpgradeSpec{Name: "u", Generation: 1, Components: []ComponentSpec{
	{Name: "db", Deployment: "db", Image: "db:2"},
	{Name: "worker", Deployment: "worker", Image: "worker:2", DependsOn: []string{"db"}},
	{Name: "indexer", Deployment: "indexer", Image: "indexer:2", DependsOn: []string{"db"}},
	{Name: "api", Deployment: "api", Image: "api:2", DependsOn: []string{"worker", "indexer"}},
}}

// graphWrite records a successful write of dep by a reconcile of the diamond.
func (b *builder) graphWrite(dep string, images ...string) *builder {
	b.write(0, dep, images...)
	b.h.Ops[len(b.h.Ops)-1].Upgrade = diamond
	return b
}

// graphStatus records a status write moving the components from prev to next.
func (b *builder) graphStatus(phase string, prev, next map[string]string) *builder {
	b.seq++
	call := b.seq
	b.phase("u", phase, 1)
	b.seq++
	b.h.Ops = append(b.h.Ops, Op{ID: len(b.h.Ops) + 1, Verb: "patch", Sub: "status", Kind: "ApplicationUpgrade", Namespace: "ns", Name: "u",
		CallSeq: call, ReturnSeq: b.seq, RV: strconv.FormatUint(b.rv, 10), Phase: phase, PrevPhase: phase,
		Components: next, PrevComponents: prev, Upgrade: diamond})
	return b
}

// roll replaces dep's one old pod by a new one; keepOld leaves the old
// pod terminating (not yet deleted).
func (b *builder) roll(dep string, keepOld bool) *builder {
	b.graphWrite(dep, dep+":2")
	b.fact(eventlog.PodCreated, dep+"-new", dep, dep+":2").fact(eventlog.PodReady, dep+"-new", dep)
	b.fact(eventlog.PodDeleting, dep+"-old", dep)
	if !keepOld {
		b.fact(eventlog.PodDeleted, dep+"-old", dep)
	}
	return b
}

func diamondStart() *builder {
	b := &builder{}
	for _, d := range []string{"db", "worker", "indexer", "api"} {
		b.fact(eventlog.DeploymentWrite, d, d, d+":1").fact(eventlog.DeploymentStatus, d, d, d+":1").
			fact(eventlog.PodCreated, d+"-old", d, d+":1").fact(eventlog.PodReady, d+"-old", d)
	}
	return b.phase("u", "Progressing", 1)
}

func TestDiamondWrittenInDependencyOrderIsLegal(t *testing.T) {
	b := diamondStart().roll("db", false).roll("worker", false).roll("indexer", false).roll("api", false)
	r := Check(b.h)
	assert.Equal(t, porcupine.Ok, r.Linearizable, r.Illegal)
	assert.Empty(t, r.Violations)
}

// TestDiamondCallerWrittenWhenOnlyOneDependencyRolled is the "any instead
// of all dependencies" bug: the API is written once the worker is rolled
// out while an old indexer pod still terminates.
func TestDiamondCallerWrittenWhenOnlyOneDependencyRolled(t *testing.T) {
	b := diamondStart().roll("db", false).roll("worker", false).roll("indexer", true)
	b.graphWrite("api", "api:2")
	r := Check(b.h)
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, `component "api" image api:2 written while the dependency "indexer" is not fully rolled out: old pod indexer-old (hash h-indexer:1, indexer:1) of indexer still exists (terminating)`)
	assert.Contains(t, r.Failed(), CheckOrdering)
}

func TestComponentClaimsAreJudged(t *testing.T) {
	b := diamondStart().roll("db", false).roll("worker", true)
	b.graphStatus("Progressing", map[string]string{"worker": "RollingOut"}, map[string]string{"worker": "Rolled"})
	r := Check(b.h)
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, `component "worker" claimed Rolled while not fully rolled out`)

	b = diamondStart().roll("db", true)
	b.graphStatus("Progressing", map[string]string{"db": "RollingOut", "worker": "Pending"}, map[string]string{"db": "RollingOut", "worker": "Upgrading"})
	r = Check(b.h)
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, `component "worker" claimed Upgrading while the dependency "db" is not fully rolled out`)

	b = diamondStart().roll("db", false)
	b.graphStatus("Progressing", map[string]string{"db": "RollingOut", "worker": "Pending"}, map[string]string{"db": "Rolled", "worker": "Upgrading"})
	assert.True(t, Check(b.h).OK())
}

func TestCompletedGraphClaimsEveryComponent(t *testing.T) {
	b := diamondStart().roll("db", false).roll("worker", false).roll("indexer", false)
	b.seq++
	b.h.Ops = append(b.h.Ops, Op{ID: len(b.h.Ops) + 1, Verb: "patch", Sub: "status", Kind: "ApplicationUpgrade", Namespace: "ns", Name: "u",
		CallSeq: b.seq, ReturnSeq: b.seq + 1, RV: strconv.FormatUint(b.rv+1, 10), Phase: "Completed", PrevPhase: "Progressing", Upgrade: diamond})
	b.seq++
	b.phase("u", "Completed", 1)
	r := Check(b.h)
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, `phase Completed claimed while the component "api" is not fully rolled out`)
}

func TestGraphEdgesAreOrderingPairs(t *testing.T) {
	b := diamondStart().graphWrite("db", "db:2")
	got := pairs(b.h, nil)
	assert.Len(t, got, 4)
	assert.Contains(t, fmtPairs(got), "indexer→api")
	assert.Contains(t, fmtPairs(got), "db→worker")
}

func fmtPairs(ps []Pair) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Worker+"→"+p.API)
	}
	return out
}

func TestComponentTerminal(t *testing.T) {
	b := &builder{}
	comp := func(phase string, gen int64) {
		b.fact(eventlog.ComponentPhase, "u", "api")
		f := &b.h.Facts[len(b.h.Facts)-1]
		f.Phase, f.Generation = phase, gen
	}
	comp("api=Pending", 1)
	comp("api=Blocked", 1)
	comp("api=Pending", 2) // a new generation starts over
	assert.Empty(t, Invariants(b.h))
	comp("api=Blocked", 2)
	comp("api=Upgrading", 2)
	v := Invariants(b.h)
	if assert.Len(t, v, 1) {
		assert.Equal(t, CheckComponentTerminal, v[0].Check)
		assert.Contains(t, v[0].Message, "component api of upgrade ns/u left Blocked for Upgrading")
	}
}

// TestComponentTerminalAllowsARecovery: a component Failed by its rollout
// may become Rolled (RolloutRecovered), and then its Blocked dependent may
// move on; Failed to anything else is still a violation.
func TestComponentTerminalAllowsARecovery(t *testing.T) {
	b := &builder{}
	comp := func(name, phase string) {
		b.fact(eventlog.ComponentPhase, "u", name)
		f := &b.h.Facts[len(b.h.Facts)-1]
		f.Phase, f.Generation = name+"="+phase, 1
	}
	comp("worker", "RollingOut")
	comp("api", "Pending")
	comp("worker", "Failed")
	comp("api", "Blocked")
	comp("api", "Upgrading")
	comp("worker", "Rolled")
	assert.Empty(t, Invariants(b.h))
	comp("worker", "Failed")
	comp("worker", "RollingOut")
	v := Invariants(b.h)
	if assert.Len(t, v, 1) {
		assert.Contains(t, v[0].Message, "left Failed for RollingOut")
	}
}

// completed records the diamond's status write into Completed.
func (b *builder) completed() *builder {
	b.seq++
	b.h.Ops = append(b.h.Ops, Op{ID: len(b.h.Ops) + 1, Verb: "patch", Sub: "status", Kind: "ApplicationUpgrade", Namespace: "ns", Name: "u",
		CallSeq: b.seq, ReturnSeq: b.seq + 1, RV: strconv.FormatUint(b.rv+1, 10), Phase: "Completed", PrevPhase: "Progressing", Upgrade: diamond})
	b.seq++
	return b.phase("u", "Completed", 1)
}

// A person reverting a dependency after its dependent was written does not
// make the dependent's own rollout a false claim: that write was judged
// when it was made. A dependent not yet written still needs it.
func TestClaimsAfterADependencyIsReverted(t *testing.T) {
	b := diamondStart().roll("db", false).roll("worker", false)
	b.fact(eventlog.DeploymentWrite, "db", "db", "db:1") // a GitOps tool re-applies db:1
	b.graphStatus("Progressing", map[string]string{"db": "Rolled", "worker": "RollingOut"}, map[string]string{"db": "Rolled", "worker": "Rolled"})
	r := Check(b.h)
	assert.True(t, r.OK(), "%s %v", r.Illegal, r.Violations)

	b = diamondStart().roll("db", false).roll("worker", false)
	b.fact(eventlog.DeploymentWrite, "db", "db", "db:1")
	b.graphStatus("Progressing", map[string]string{"db": "Rolled", "indexer": "Pending"}, map[string]string{"db": "Rolled", "indexer": "Upgrading"})
	r = Check(b.h)
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, `component "indexer" claimed Upgrading while the dependency "db" is not fully rolled out: deployment db runs db:1, not db:2`)
}

// Completed claims every component rolled out now or since its template
// took its target: a worker pod terminating after a person scales the
// worker down does not unmake its rollout; a revert of its image does.
func TestCompletedAfterAPersonChangesAComponent(t *testing.T) {
	b := diamondStart().roll("db", false).roll("worker", false).roll("indexer", false).roll("api", false)
	b.fact(eventlog.PodDeleting, "worker-new", "worker") // scaled down
	r := Check(b.completed().h)
	assert.True(t, r.OK(), "%s %v", r.Illegal, r.Violations)

	b = diamondStart().roll("db", false).roll("worker", false).roll("indexer", false).roll("api", false)
	b.fact(eventlog.DeploymentWrite, "worker", "worker", "worker:1")
	r = Check(b.completed().h)
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, `phase Completed claimed while the component "worker" is not fully rolled out: deployment worker runs worker:1, not worker:2`)

	// the API written and still rolling: never rolled since its write
	b = diamondStart().roll("db", false).roll("worker", false).roll("indexer", false).graphWrite("api", "api:2")
	r = Check(b.completed().h)
	assert.Contains(t, r.Illegal, `phase Completed claimed while the component "api" is not fully rolled out`)
}

// An upgrade deleted and created again writes its images afresh; within
// one upgrade's life a second write of the same images is a duplicate.
func TestOneWritePerImageCountsEachLifeOfAnUpgrade(t *testing.T) {
	twice := func(deletedBetween bool) []Violation {
		b := diamondStart().graphWrite("db", "db:2")
		if deletedBetween {
			b.fact(eventlog.UpgradeDeleted, "u", "")
		}
		b.fact(eventlog.DeploymentWrite, "db", "db", "db:1") // reverted meanwhile
		b.graphWrite("db", "db:2")
		for i := range b.h.Ops {
			b.h.Ops[i].Request = "ns/u"
		}
		return oneWritePerImage(b.h)
	}
	assert.Empty(t, twice(true))
	v := twice(false)
	if assert.Len(t, v, 1) {
		assert.Equal(t, CheckOneWrite, v[0].Check)
		assert.Contains(t, v[0].Message, "deployment ns/db = db:2 written a second time")
	}
}

// A person restarting a dependency (same images, a new template) after it
// rolled out: a dependent may still be claimed Upgrading (its write is
// judged against the state when it is made).
func TestUpgradingClaimAfterADependencyIsRestarted(t *testing.T) {
	b := diamondStart().roll("db", false)
	b.fact(eventlog.DeploymentWrite, "db", "db", "db:2")
	b.h.Facts[len(b.h.Facts)-1].HashAfter = "h-db:2-restarted"
	b.graphStatus("Progressing", map[string]string{"db": "Rolled", "worker": "Pending"}, map[string]string{"db": "Rolled", "worker": "Upgrading"})
	r := Check(b.h)
	assert.True(t, r.OK(), "%s %v", r.Illegal, r.Violations)

	b.graphWrite("worker", "worker:2") // db's old pod (of the previous template) still runs
	r = Check(b.h)
	assert.Contains(t, r.Illegal, `component "worker" image worker:2 written while the dependency "db" is not fully rolled out: old pod db-new`)
}

// A spec changed to another image and back writes the first image again:
// one write per image is counted per generation of the upgrade.
func TestOneWritePerImageCountsEachGeneration(t *testing.T) {
	b := diamondStart().graphWrite("db", "db:2")
	gen2 := *diamond
	gen2.Generation = 2
	b.graphWrite("db", "db:3")
	b.h.Ops[len(b.h.Ops)-1].Upgrade = &gen2
	gen3 := *diamond
	gen3.Generation = 3
	b.graphWrite("db", "db:2")
	b.h.Ops[len(b.h.Ops)-1].Upgrade = &gen3
	assert.Empty(t, oneWritePerImage(b.h))
}

// Without a recorded call the event log's phase lines are the claims
// (LogClaims): Completed read from the log while the API still rolls is
// judged like a recorded status write; after its rollout it is legal.
func TestLogClaimsJudgeTheLogsPhases(t *testing.T) {
	logOnly := func(b *builder) *Result {
		h := History{Facts: b.h.Facts}
		h.Ops = LogWrites(h, []UpgradeSpec{withNS(diamond)})
		h.Ops = append(h.Ops, LogClaims(h, []UpgradeSpec{withNS(diamond)})...)
		return Check(h)
	}
	b := diamondStart().roll("db", false).roll("worker", false).roll("indexer", false).graphWrite("api", "api:2")
	r := logOnly(b.completed())
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, `phase Completed claimed while the component "api" is not fully rolled out`)

	b = diamondStart().roll("db", false).roll("worker", false).roll("indexer", false).roll("api", false)
	r = logOnly(b.completed())
	assert.True(t, r.OK(), "%s %v", r.Illegal, r.Violations)
}

func withNS(u *UpgradeSpec) UpgradeSpec {
	c := *u
	c.Namespace = "ns"
	return c
}

// A line of the log is judged against the spec of its generation: an
// upgrade re-specified after it completed does not make its first
// Completed a false claim.
func TestLogClaimsReadEachGenerationsSpec(t *testing.T) {
	b := diamondStart().roll("db", false).roll("worker", false).roll("indexer", false).roll("api", false).completed()
	gen2 := withNS(diamond)
	gen2.Generation = 2
	gen2.Components = slices.Clone(gen2.Components)
	gen2.Components[0].Image = "db:3"
	h := History{Facts: b.h.Facts}
	h.Ops = LogClaims(h, []UpgradeSpec{withNS(diamond), gen2})
	if assert.Len(t, h.Ops, 2, "the Progressing and Completed lines") {
		assert.Equal(t, int64(1), h.Ops[1].Upgrade.Generation)
	}
	r := Check(h)
	assert.True(t, r.OK(), "%s %v", r.Illegal, r.Violations)
}
