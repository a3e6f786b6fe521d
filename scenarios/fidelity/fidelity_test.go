package fidelity

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

type log struct {
	events []eventlog.Event
}

func (l *log) add(e eventlog.Event) *log {
	e.RV = strconv.Itoa(len(l.events) + 1)
	e.T = float64(len(l.events))
	l.events = append(l.events, e)
	return l
}

func (l *log) status(avail int32) *log {
	return l.add(eventlog.Event{Event: eventlog.DeploymentStatus, Name: "w", Status: &eventlog.Counters{Generation: 1, ObservedGeneration: 1, Spec: 2, Replicas: 2, Updated: 2, Available: avail}})
}

func (l *log) pod(kind, image string) *log {
	return l.add(eventlog.Event{Event: kind, Deployment: "w", Images: []string{"registry.example.com/" + image}})
}

func (l *log) phase(p string) *log {
	return l.add(eventlog.Event{Event: eventlog.Phase, Name: "u", Phase: p})
}

func TestCompare(t *testing.T) {
	sim := (&log{}).status(0).status(2).pod(eventlog.PodCreated, "w:1").pod(eventlog.PodDeleted, "w:0").phase("Pending").phase("Completed")
	real := (&log{}).status(0).status(1).status(2).pod(eventlog.PodDeleted, "w:0").pod(eventlog.PodCreated, "w:1").phase("Pending").phase("Completed")
	diffs := Compare(sim.events, real.events)
	require.Len(t, diffs, 3)
	byEntity := map[string]Difference{}
	for _, d := range diffs {
		byEntity[d.Entity] = d
	}
	assert.Equal(t, "yes", byEntity["u phases"].Verdict())
	assert.Equal(t, "real refines sim", byEntity["w status"].Verdict())
	pods := byEntity["w pods"]
	assert.Equal(t, "no, from state 1", pods.Verdict())
	assert.Equal(t, "w:1 created", pods.SimState)
	assert.Equal(t, "w:0 deleted", pods.RealAt)
	assert.Equal(t, 2, pods.Unmatched, "w:1 created matches, w:0 deleted is already behind it in the real order")

	spans := PhaseDurations(real.events)
	require.Len(t, spans, 1)
	assert.Equal(t, PhaseSpan{Upgrade: "u", Phase: "Pending", Seconds: 1}, spans[0])

	var out bytes.Buffer
	require.NoError(t, WriteReport(&out, []Scenario{{Name: "s", Sim: sim.events, Real: real.events}}))
	assert.Contains(t, out.String(), "1 of 3 sequences agree state for state; 1 more differ only in grain")
	assert.Contains(t, out.String(), "real: w:0 deleted")
}

// Each backend adding its own intermediate state, the shared states in one
// order, is a difference in grain; two shared states swapped is not.
func TestCompareEachRefinesTheOther(t *testing.T) {
	sim := (&log{}).status(0).status(3).status(2)
	real := (&log{}).status(0).status(1).status(2)
	d := Compare(sim.events, real.events)[0]
	assert.Equal(t, "each refines the other", d.Verdict())
	assert.Zero(t, d.Unmatched)

	swapped := (&log{}).status(0).status(2).status(1)
	d = Compare((&log{}).status(0).status(1).status(2).events, swapped.events)[0]
	assert.Equal(t, "no, from state 2", d.Verdict())

	// Two rollouts through the same states: a transient state the second
	// rollout shows on one backend only (C14) is grain ...
	twice := (&log{}).status(0).status(1).status(2).status(0).status(1).status(2)
	once := (&log{}).status(0).status(1).status(2).status(0).status(4).status(2)
	d = Compare(twice.events, once.events)[0]
	assert.True(t, d.Grain(), d.Verdict())
	// ... but a second rollout whose shared states come swapped is not,
	swappedLater := (&log{}).status(0).status(1).status(2).status(0).status(2).status(1)
	d = Compare(twice.events, swappedLater.events)[0]
	assert.False(t, d.Grain(), d.Verdict())
	// nor a state shown before the one the other backend shows first,
	// each backend also adding a state of its own.
	early := (&log{}).status(0).status(2).status(1).status(2)
	d = Compare(early.events, (&log{}).status(0).status(1).status(3).status(2).events)[0]
	assert.False(t, d.Grain(), d.Verdict())

	var out bytes.Buffer
	require.NoError(t, WriteReport(&out, []Scenario{{Name: "s", Sim: sim.events, Real: real.events}}))
	assert.Contains(t, out.String(), "0 of 1 sequences agree state for state; 1 more differ only in grain (one backend adds intermediate states; in 1 of them each adds its own, the shared states in one order); 0 disagree in order.")
}

// StatefulSet and DaemonSet sequences: status states with revisions named
// r1, r2 by first appearance (backends name them differently), a
// StatefulSet's pods by name and revision in one sequence (or one per pod
// for Parallel), a DaemonSet's pods per node; each kind tallied.
func TestSequencesOfWorkloadKinds(t *testing.T) {
	sts := func(l *log, og int64, cur, upd string, updated int32) *log {
		return l.add(eventlog.Event{Event: eventlog.WorkloadStatus, Kind: eventlog.KindStatefulSet, Name: "db",
			Workload: &eventlog.WorkloadCounters{Generation: 2, ObservedGeneration: og, Spec: 2, Replicas: 2, Ready: 2, Available: 2,
				Current: 2 - updated, Updated: updated, CurrentRevision: cur, UpdateRevision: upd}})
	}
	pod := func(l *log, kind, wl, name, hash, node, ev string) *log {
		return l.add(eventlog.Event{Event: ev, Kind: kind, Deployment: wl, Name: name, Hash: hash, Node: node, Images: []string{"registry.example.com/" + wl + ":" + hash}})
	}
	build := func(prefix string) *log {
		l := &log{}
		sts(l, 0, "", "", 0) // not yet seen by its controller: no state
		sts(l, 1, prefix+"a", prefix+"a", 0)
		sts(l, 2, prefix+"a", prefix+"b", 0)
		pod(l, eventlog.KindStatefulSet, "db", "db-1", prefix+"a", "n0", eventlog.PodDeleting)
		pod(l, eventlog.KindStatefulSet, "db", "db-1", prefix+"b", "n0", eventlog.PodCreated)
		pod(l, eventlog.KindDaemonSet, "agent", "agent-x", prefix+"h", "n1", eventlog.PodCreated)
		return l
	}
	seqs := Sequences(build("sim-").events)
	got := map[string]Sequence{}
	for _, s := range seqs {
		got[s.Entity] = s
	}
	require.Len(t, got, 3)
	assert.Equal(t, []string{"NOT observed rep 2 ready 2 avail 2 cur 2 upd 0 rev r1/r1", "observed rep 2 ready 2 avail 2 cur 2 upd 0 rev r1/r2"}, got["db status"].States)
	assert.Equal(t, []string{"db-1 db:sim-a r1 deleting", "db-1 db:sim-b r2 created"}, got["db pods"].States)
	assert.Equal(t, eventlog.KindStatefulSet, got["db pods"].Kind)
	assert.Equal(t, []string{"agent:sim-h r1 created"}, got["agent pods on n1"].States)
	assert.Equal(t, eventlog.KindDaemonSet, got["agent pods on n1"].Kind)

	perPod := SequencesWith(build("sim-").events, Options{PerPod: map[string]bool{"db": true}})
	assert.Equal(t, "pod db-1", perPod[2].Entity)
	assert.Equal(t, []string{"db:sim-a r1 deleting", "db:sim-b r2 created"}, perPod[2].States)

	// other revision names, other images: the pods differ, the status agrees
	diffs := Compare(build("sim-").events, build("real-").events)
	var tally = map[string]*Tally{}
	for _, d := range diffs {
		if tally[d.Kind] == nil {
			tally[d.Kind] = &Tally{}
		}
		tally[d.Kind].Add(d)
	}
	assert.Equal(t, Tally{Agree: 1, Order: 1}, *tally[eventlog.KindStatefulSet])
	var out bytes.Buffer
	require.NoError(t, WriteReport(&out, []Scenario{{Name: "s", Sim: build("x-").events, Real: build("x-").events}}))
	assert.Contains(t, out.String(), "StatefulSet          2: 2 / 0 / 0")
	assert.Contains(t, out.String(), "DaemonSet            1: 1 / 0 / 0")
}

func TestWriteSequencesShowsWhatDoesNotAgree(t *testing.T) {
	sim := (&log{}).status(0).pod(eventlog.PodCreated, "w:1").pod(eventlog.PodDeleted, "w:0").phase("Completed")
	real := (&log{}).status(0).pod(eventlog.PodDeleted, "w:0").phase("Completed")
	var out bytes.Buffer
	require.NoError(t, WriteSequences(&out, Scenario{Name: "s", Sim: sim.events, Real: real.events}))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, "a header and two states, only for the sequence that does not agree:\n%s", out.String())
	assert.Regexp(t, `^s / w pods \(sim refines real\) +SIM +REAL$`, lines[0])
	assert.Regexp(t, `^  1 +w:1 created +w:0 deleted$`, lines[1])
	assert.Regexp(t, `^  2 +w:0 deleted +\(ended\)$`, lines[2])

	out.Reset()
	require.NoError(t, WriteSequences(&out, Scenario{Name: "s", Diffs: []Difference{{Entity: "x", Index: 0}}}))
	assert.Empty(t, out.String(), "a scenario compared from sequences has no states to show")
}

// at is a pod event of pod name at t seconds (times are what commute reads).
func (l *log) at(t float64, kind, name, image string) *log {
	l.pod(kind, image)
	e := &l.events[len(l.events)-1]
	e.T, e.Name = t, name
	return l
}

func TestCompareCommutesAPodDeletionRacingAReplacement(t *testing.T) {
	// The simulator commits a grace-0 delete's two writes at one instant and
	// then replaces the pod; on the real cluster the ReplicaSet controller's
	// replacement can land between the API server's two writes.
	sim := (&log{}).at(1, eventlog.PodDeleting, "a", "w:1").at(1, eventlog.PodDeleted, "a", "w:1").at(1, eventlog.PodCreated, "b", "w:1")
	race := func(gap float64) []eventlog.Event {
		return (&log{}).at(1, eventlog.PodDeleting, "a", "w:1").at(1.003, eventlog.PodCreated, "b", "w:1").at(1.003+gap, eventlog.PodDeleted, "a", "w:1").events
	}
	d := Compare(sim.events, race(0.0007))
	require.Len(t, d, 1)
	assert.True(t, d[0].Agree(), "%+v", d[0])
	assert.Equal(t, 1, d[0].Commuted)
	assert.Equal(t, "yes (1 races commuted)", d[0].Verdict())

	d = Compare(sim.events, race(0.050))
	assert.Equal(t, "no, from state 2", d[0].Verdict(), "50 ms apart is an order, not a race")
	assert.Zero(t, d[0].Commuted)
}

func TestCompareDoesNotCommuteDecisions(t *testing.T) {
	// A new pod ready before an old one is deleted is the Deployment
	// controller's decision (maxUnavailable), however close in time: no
	// deletion is involved, so the orders still disagree.
	sim := (&log{}).at(1, eventlog.PodReady, "new", "w:2").at(1, eventlog.PodDeleting, "old", "w:1")
	real := (&log{}).at(1, eventlog.PodDeleting, "old", "w:1").at(1.001, eventlog.PodReady, "new", "w:2")
	d := Compare(sim.events, real.events)
	assert.Equal(t, "no, from state 1", d[0].Verdict())

	// Nor does a pod's deletion pass its own earlier state.
	sim = (&log{}).at(1, eventlog.PodDeleted, "a", "w:1").at(1, eventlog.PodDeleting, "a", "w:1")
	real = (&log{}).at(1, eventlog.PodDeleting, "a", "w:1").at(1.001, eventlog.PodDeleted, "a", "w:1")
	d = Compare(sim.events, real.events)
	assert.False(t, d[0].Agree())
	assert.Zero(t, d[0].Commuted)
}

// TestCompareSkippedTransientIsGrain: the real controller published one
// status for two pod deletions (avail 2 → 0) where the simulator shows
// avail 1 on the way down and again on the way up (node-lost, gap 100
// ms): grain. Showing the final state early and leaving it is not.
func TestCompareSkippedTransientIsGrain(t *testing.T) {
	sim := (&log{}).status(3).status(2).status(1).status(0).status(1).status(2).status(3)
	real := (&log{}).status(3).status(2).status(0).status(1).status(2).status(3)
	d := Compare(sim.events, real.events)[0]
	assert.True(t, d.Grain(), d.Verdict())
	d = Compare(real.events, sim.events)[0]
	assert.True(t, d.Grain(), "the other way round: %s", d.Verdict())

	finalEarly := (&log{}).status(0).status(3).status(1).status(2).status(3)
	d = Compare(finalEarly.events, (&log{}).status(0).status(1).status(4).status(2).status(3).events)[0]
	assert.False(t, d.Grain(), "the final state shown early: %s", d.Verdict())
}

// rsAt is a pod event of pod name of ReplicaSet rs at t seconds.
func (l *log) rsAt(t float64, kind, name, rs, image string) *log {
	l.at(t, kind, name, image)
	l.events[len(l.events)-1].ReplicaSet = rs
	return l
}

// TestCompareCommutesTwoReplicaSetsOfOneSync: one Deployment sync scales
// the old ReplicaSet down and the new one up, and two ReplicaSet workers
// carry it out in either order. With a write of the Deployment between
// them the two pods' states are an order: one followed from the other.
func TestCompareCommutesTwoReplicaSetsOfOneSync(t *testing.T) {
	sim := (&log{}).status(3).rsAt(1, eventlog.PodDeleting, "old", "w-1", "w:1").rsAt(1, eventlog.PodCreated, "new", "w-2", "w:2")
	real := (&log{}).status(3).rsAt(1, eventlog.PodCreated, "new", "w-2", "w:2").rsAt(1.002, eventlog.PodDeleting, "old", "w-1", "w:1")
	var pods Difference
	for _, d := range Compare(sim.events, real.events) {
		if d.Entity == "w pods" {
			pods = d
		}
	}
	assert.Equal(t, "yes (1 races commuted)", pods.Verdict())

	between := (&log{}).status(3).rsAt(1, eventlog.PodCreated, "new", "w-2", "w:2").status(2)
	between.rsAt(1.002, eventlog.PodDeleting, "old", "w-1", "w:1")
	for _, d := range Compare(sim.events, between.events) {
		if d.Entity == "w pods" {
			assert.Equal(t, "no, from state 1", d.Verdict(), "a status write between: an order")
		}
	}
	oneRS := (&log{}).status(3).rsAt(1, eventlog.PodCreated, "new", "w-1", "w:2").rsAt(1.002, eventlog.PodDeleting, "old", "w-1", "w:1")
	for _, d := range Compare(sim.events, oneRS.events) {
		if d.Entity == "w pods" {
			assert.Equal(t, "no, from state 1", d.Verdict(), "one ReplicaSet's own actions: an order")
		}
	}
}
