package judge

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// logEvent is an event of a v2 log without the detailed fields (Images),
// as the simulator runners, the demo and the e2e record it: a write's
// HashAfter and a pod's Hash are "h-<image>", one container "c".
func logEvent(t float64, kind, name, dep, image string, rv int) eventlog.Event {
	e := eventlog.Event{T: t, Event: kind, Namespace: "ns", Name: name, Deployment: dep, Image: image, RV: strconv.Itoa(rv)}
	if image != "" {
		e.Containers = []eventlog.Container{{Name: "c", Image: image}}
		if kind == eventlog.DeploymentWrite {
			e.Container, e.HashAfter = "c", "h-"+image
		} else {
			e.Hash = "h-" + image
		}
	}
	return e
}

// alpha is the v1alpha1-shaped upgrade of w (callee) and a (caller) in ns,
// as a runner reads it at the end of a run.
var alpha = UpgradeSpec{Name: "u", Namespace: "ns", Worker: "w", WorkerImage: "w:2", API: "a", APIImage: "a:2"}

// logRun is checks' safe run: the API written after the old worker pod is gone.
func logRun() []eventlog.Event {
	return []eventlog.Event{
		logEvent(0, eventlog.DeploymentWrite, "w", "w", "w:1", 1),
		logEvent(0, eventlog.DeploymentWrite, "a", "a", "a:1", 2),
		logEvent(0, eventlog.PodCreated, "w-old", "w", "w:1", 3),
		logEvent(0, eventlog.PodReady, "w-old", "w", "", 4),
		logEvent(1, eventlog.DeploymentWrite, "w", "w", "w:2", 5),
		logEvent(2, eventlog.PodCreated, "w-new", "w", "w:2", 6),
		logEvent(2, eventlog.PodReady, "w-new", "w", "", 7),
		logEvent(3, eventlog.PodDeleting, "w-old", "w", "", 8),
		logEvent(9, eventlog.PodDeleted, "w-old", "w", "", 9),
		logEvent(9.25, eventlog.DeploymentWrite, "a", "a", "a:2", 10),
	}
}

func TestJudgeAcceptsASafeEventLog(t *testing.T) {
	r := Judge(Input{History: FromEvents(logRun()), Upgrades: []UpgradeSpec{alpha}})
	assert.True(t, r.OK(), r.Err())
	require.Len(t, r.history.Ops, 2, "both writes to a target are judged as the operator's")
	assert.True(t, r.history.Ops[0].FromLog)
}

// TestJudgeCatchesAnEarlyWriteInAnEventLog: with no recorded call, the
// API's write to its target while the old worker pod terminates is the
// operator's (LogWrites): porcupine and the ordering invariant both fail.
func TestJudgeCatchesAnEarlyWriteInAnEventLog(t *testing.T) {
	events := logRun()
	events[9].RV, events[8].RV = "9", "10" // the write lands before the old pod is deleted
	r := Judge(Input{History: FromEvents(events), Upgrades: []UpgradeSpec{alpha}})
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, "API image a:2 written while the worker is not fully rolled out: old pod w-old (hash h-w:1, w:1) of w still exists (terminating)")
	assert.Contains(t, r.Failed(), CheckOrdering)
	assert.Contains(t, r.Summary(), "porcupine: ")
}

// TestJudgeIgnoresWritesToOtherImages: a write that is no component's
// target (an actor's revert, a manual edit) is a fact, not the operator's.
func TestJudgeIgnoresWritesToOtherImages(t *testing.T) {
	events := logRun()
	events[9].RV, events[8].RV = "9", "10"
	events[9].Image, events[9].Containers[0].Image, events[9].HashAfter = "a:3", "a:3", "h-a:3"
	r := Judge(Input{History: FromEvents(events), Upgrades: []UpgradeSpec{alpha}})
	assert.Equal(t, porcupine.Ok, r.Linearizable, r.Illegal)
}

// TestJudgeTellsTheOperatorsWriteByItsImageOwner: an early write of the
// API's target owned by another field manager after it (a GitOps tool
// applying Git's image, eventlog.Event.ImageOwner) is not the operator's;
// owned by the operator (alone or with others), or with no owner recorded
// (older logs), it is, and it is caught.
func TestJudgeTellsTheOperatorsWriteByItsImageOwner(t *testing.T) {
	for _, c := range []struct {
		owner     string
		operators bool
	}{
		{"kustomize-controller", false},
		{"kubectl-edit,kustomize-controller", false},
		{"upgrade-operator", true},
		{"kustomize-controller,upgrade-operator", true},
		{"", true},
	} {
		events := logRun()
		events[9].RV, events[8].RV = "9", "10" // the write lands before the old pod is deleted
		events[9].Container, events[9].ImageOwner = "a", c.owner
		r := Judge(Input{History: FromEvents(events), Upgrades: []UpgradeSpec{alpha}})
		if c.operators {
			assert.Equal(t, porcupine.Illegal, r.Linearizable, "owner %q", c.owner)
		} else {
			assert.Equal(t, porcupine.Ok, r.Linearizable, "owner %q: %s", c.owner, r.Illegal)
			assert.Len(t, r.history.Ops, 1, "owner %q: only the worker's write is the operator's", c.owner)
		}
	}
}

// TestJudgeReadsTheSidecarFirstWorkerByHash: checks' sidecar case through
// the one judge; the pods' first container is the same old and new.
func TestJudgeReadsTheSidecarFirstWorkerByHash(t *testing.T) {
	tmpl := func(worker string) []eventlog.Container {
		return []eventlog.Container{{Name: "proxy", Image: "envoy:1"}, {Name: "worker", Image: worker}}
	}
	pod := func(ti float64, kind, name, hash, worker string, rv int) eventlog.Event {
		return eventlog.Event{T: ti, Event: kind, Namespace: "ns", Name: name, Deployment: "w", Image: "envoy:1", RV: strconv.Itoa(rv),
			Hash: hash, ReplicaSet: "w-" + hash, Containers: tmpl(worker)}
	}
	events := []eventlog.Event{
		{Event: eventlog.DeploymentWrite, Namespace: "ns", Name: "w", Deployment: "w", RV: "1", HashAfter: "aaa", Containers: tmpl("w:1")},
		logEvent(0, eventlog.DeploymentWrite, "a", "a", "a:1", 2),
		pod(0, eventlog.PodCreated, "w-aaa-1", "aaa", "w:1", 3),
		pod(0, eventlog.PodReady, "w-aaa-1", "aaa", "w:1", 4),
		{T: 1, Event: eventlog.DeploymentWrite, Namespace: "ns", Name: "w", Deployment: "w", RV: "5", Container: "worker", Image: "w:2",
			HashBefore: "aaa", HashAfter: "bbb", Containers: tmpl("w:2")},
		pod(2, eventlog.PodCreated, "w-bbb-1", "bbb", "w:2", 6),
		pod(2, eventlog.PodReady, "w-bbb-1", "bbb", "w:2", 7),
		pod(3, eventlog.PodDeleting, "w-aaa-1", "aaa", "w:1", 8),
		pod(9, eventlog.PodDeleted, "w-aaa-1", "aaa", "w:1", 9),
		logEvent(9.25, eventlog.DeploymentWrite, "a", "a", "a:2", 10),
	}
	r := Judge(Input{History: FromEvents(events), Upgrades: []UpgradeSpec{alpha}})
	assert.True(t, r.OK(), r.Err())

	events[9].RV, events[8].RV = "8", "9"
	events[7].RV = "10" // the API written while the old pod still runs
	r = Judge(Input{History: FromEvents(events), Upgrades: []UpgradeSpec{alpha}})
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, "old pod w-aaa-1 (hash aaa, envoy:1,w:1) of w still exists")
}

// TestJudgeChecksAnEdgeAcrossNamespaces: the callee in namespace data.
func TestJudgeChecksAnEdgeAcrossNamespaces(t *testing.T) {
	cross := UpgradeSpec{Name: "u", Namespace: "ns", Components: []ComponentSpec{
		{Name: "worker", Deployment: "w", Namespace: "data", Image: "w:2"},
		{Name: "api", Deployment: "a", Image: "a:2", DependsOn: []string{"worker"}},
	}}
	events := logRun()
	for i := range events {
		if events[i].Name != "a" {
			events[i].Namespace = "data"
		}
	}
	r := Judge(Input{History: FromEvents(events), Upgrades: []UpgradeSpec{cross}})
	assert.True(t, r.OK(), r.Err())
	events[9].RV, events[8].RV = "9", "10"
	r = Judge(Input{History: FromEvents(events), Upgrades: []UpgradeSpec{cross}})
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, `component "api" image a:2 written while the dependency "worker" is not fully rolled out`)
	assert.Contains(t, r.Failed(), CheckOrdering)
}

// stateful: db (StatefulSet) ← api (StatefulSet), both named after their component.
var stateful = &UpgradeSpec{Name: "u", Namespace: "ns", Generation: 1, Components: []ComponentSpec{
	{Name: "db", Deployment: "db", Kind: eventlog.KindStatefulSet, Image: "db:2"},
	{Name: "api", Deployment: "api", Kind: eventlog.KindStatefulSet, Image: "api:2", DependsOn: []string{"db"}},
}}

// stsFact is a fact about StatefulSet dep (a write, or one of its pods).
func (b *builder) stsFact(kind, name, dep string, images ...string) *builder {
	b.fact(kind, name, dep, images...)
	b.h.Facts[len(b.h.Facts)-1].Kind = eventlog.KindStatefulSet
	return b
}

// stsWrite records the operator's successful write of StatefulSet dep.
func (b *builder) stsWrite(dep string, images ...string) *builder {
	b.seq++
	call := b.seq
	b.stsFact(eventlog.DeploymentWrite, dep, dep, images...)
	b.seq++
	b.h.Ops = append(b.h.Ops, Op{ID: len(b.h.Ops) + 1, Verb: "patch", Kind: eventlog.KindStatefulSet, Namespace: "ns", Name: dep,
		Request: "ns/u", CallSeq: call, ReturnSeq: b.seq, RV: strconv.FormatUint(b.rv, 10), Images: images, Replicas: 1, Upgrade: stateful})
	return b
}

func statefulStart() *builder {
	b := &builder{}
	for _, d := range []string{"db", "api"} {
		b.stsFact(eventlog.DeploymentWrite, d, d, d+":1").stsFact(eventlog.PodCreated, d+"-0", d, d+":1").stsFact(eventlog.PodReady, d+"-0", d)
	}
	return b
}

// TestStatefulSetCallerWrittenBeforeItsCalleeRolled: the model judges an
// operator write of a StatefulSet like one of a Deployment (it accepted
// every write of another kind).
func TestStatefulSetCallerWrittenBeforeItsCalleeRolled(t *testing.T) {
	b := statefulStart().stsWrite("db", "db:2").stsFact(eventlog.PodDeleting, "db-0", "db")
	b.stsWrite("api", "api:2")
	r := Check(b.h)
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, `component "api" image api:2 written while the dependency "db" is not fully rolled out: old pod db-0 (hash h-db:1, db:1) of db still exists (terminating)`)
	assert.Contains(t, r.Failed(), CheckOrdering, "the per-edge ordering reads the kinds too")

	ok := statefulStart().stsWrite("db", "db:2").stsFact(eventlog.PodDeleting, "db-0", "db").stsFact(eventlog.PodDeleted, "db-0", "db").
		stsFact(eventlog.PodCreated, "db-0", "db", "db:2").stsFact(eventlog.PodReady, "db-0", "db").stsWrite("api", "api:2")
	r = Check(ok.h)
	assert.True(t, r.OK(), r.Err())
}

// TestDaemonSetCallerWrittenBeforeItsCalleeRolled: the same for a DaemonSet callee.
func TestDaemonSetCallerWrittenBeforeItsCalleeRolled(t *testing.T) {
	ds := &UpgradeSpec{Name: "u", Namespace: "ns", Components: []ComponentSpec{
		{Name: "agent", Deployment: "agent", Kind: eventlog.KindDaemonSet, Image: "agent:2"},
		{Name: "api", Deployment: "api", Image: "api:2", DependsOn: []string{"agent"}},
	}}
	b := &builder{}
	b.fact(eventlog.DeploymentWrite, "agent", "agent", "agent:1").fact(eventlog.PodCreated, "agent-n1", "agent", "agent:1")
	for _, i := range []int{0, 1} {
		b.h.Facts[i].Kind = eventlog.KindDaemonSet
	}
	b.fact(eventlog.DeploymentWrite, "api", "api", "api:1")
	b.write(0, "agent", "agent:2")
	b.h.Facts[len(b.h.Facts)-1].Kind = eventlog.KindDaemonSet
	op := &b.h.Ops[len(b.h.Ops)-1]
	op.Kind, op.Replicas, op.Upgrade = eventlog.KindDaemonSet, 0, ds
	b.write(0, "api", "api:2")
	b.h.Ops[len(b.h.Ops)-1].Upgrade = ds
	r := Check(b.h)
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, `dependency "agent" is not fully rolled out: old pod agent-n1`)
}

func TestJudgeWritesTheTimelineBesideTheVisualization(t *testing.T) {
	events := logRun()
	events[9].RV, events[8].RV = "9", "10"
	h := FromEvents(events)
	r := Judge(Input{History: h, Upgrades: []UpgradeSpec{alpha}})
	dir := t.TempDir()
	require.NoError(t, r.WriteArtifacts(dir, h, "seed 1"))
	for _, p := range ArtifactPaths(dir) {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Positive(t, fi.Size(), p)
	}
	ops, err := os.ReadFile(filepath.Join(dir, OpsFile))
	require.NoError(t, err)
	assert.Contains(t, string(ops), `"fromLog":true`)
}

// phaseEvent is upgrade u's Phase event at generation gen.
func phaseEvent(t float64, phase string, gen int64, rv int) eventlog.Event {
	return eventlog.Event{T: t, Event: eventlog.Phase, Namespace: "ns", Name: "u", Phase: phase, Generation: gen, RV: strconv.Itoa(rv)}
}

// phaseViolations are r's phase-monotone violations.
func phaseViolations(r *Result) []Violation {
	var out []Violation
	for _, v := range r.Violations {
		if v.Check == CheckPhaseMonotone {
			out = append(out, v)
		}
	}
	return out
}

// TestJudgePhasesOfAPlainLogByGeneration: the plain log carries the
// upgrade's observedGeneration, so a phase going back within generation 1
// is judged there too (it was excused when the plain log had none).
func TestJudgePhasesOfAPlainLogByGeneration(t *testing.T) {
	events := append(logRun(),
		phaseEvent(9.3, "UpgradingAPI", 1, 11),
		phaseEvent(9.4, "UpgradingWorker", 1, 12))
	r := Judge(Input{History: FromEvents(events), Upgrades: []UpgradeSpec{alpha}})
	v := phaseViolations(r)
	require.Len(t, v, 1, r.Err())
	assert.Contains(t, v[0].Message, "went back from UpgradingAPI to UpgradingWorker in generation 1")

	// the same log without generations (recorded before they were) cannot be judged
	events[len(events)-2].Generation, events[len(events)-1].Generation = 0, 0
	assert.Empty(t, phaseViolations(Judge(Input{History: FromEvents(events), Upgrades: []UpgradeSpec{alpha}})))
}

// TestJudgeExcusesAMoveBackAfterARevert: a GitOps tool taking the worker's
// target image back out moves the upgrade back by design (docs/gitops.md);
// the same move with no revert before it is a violation.
func TestJudgeExcusesAMoveBackAfterARevert(t *testing.T) {
	done := append(logRun(), phaseEvent(9.5, "Completed", 1, 11))
	moveBack := phaseEvent(11, "UpgradingWorker", 1, 13)

	reverted := append(append([]eventlog.Event{}, done...),
		logEvent(10, eventlog.DeploymentWrite, "w", "w", "w:1", 12), moveBack)
	r := Judge(Input{History: FromEvents(reverted), Upgrades: []UpgradeSpec{alpha}})
	assert.Empty(t, phaseViolations(r), r.Err())

	// a write that keeps the target (an annotation, another container) is no revert
	kept := logEvent(10, eventlog.DeploymentWrite, "w", "w", "w:2", 12)
	kept.Containers = append(kept.Containers, eventlog.Container{Name: "proxy", Image: "envoy:2"})
	notReverted := append(append([]eventlog.Event{}, done...), kept, moveBack)
	v := phaseViolations(Judge(Input{History: FromEvents(notReverted), Upgrades: []UpgradeSpec{alpha}}))
	require.Len(t, v, 1)
	assert.Contains(t, v[0].Message, "left Completed for UpgradingWorker")
}

// TestJudgeExcusesAMoveBackAfterTheWorkerLostAPod: between UpgradingAPI
// and the API's write the worker's new pod was deleted (node-lost), so
// the operator says the worker is no longer rolled out (simulate --seed
// 121). The same move with no pod event of the worker between, or with
// only an event of the API's pods, is a violation.
func TestJudgeExcusesAMoveBackAfterTheWorkerLostAPod(t *testing.T) {
	rolled := append(logRun()[:9], phaseEvent(9.1, "UpgradingAPI", 1, 10))
	back := phaseEvent(9.3, "WaitingForWorkers", 1, 13)
	lost := append(append([]eventlog.Event{}, rolled...),
		logEvent(9.2, eventlog.PodDeleting, "w-new", "w", "", 11), logEvent(9.2, eventlog.PodDeleted, "w-new", "w", "", 12), back)
	r := Judge(Input{History: FromEvents(lost), Upgrades: []UpgradeSpec{alpha}})
	assert.Empty(t, phaseViolations(r), r.Err())

	for name, between := range map[string][]eventlog.Event{
		"nothing":      nil,
		"an API's pod": {logEvent(9.2, eventlog.PodCreated, "a-x", "a", "a:1", 11)},
	} {
		events := append(append(append([]eventlog.Event{}, rolled...), between...), back)
		v := phaseViolations(Judge(Input{History: FromEvents(events), Upgrades: []UpgradeSpec{alpha}}))
		require.Len(t, v, 1, name)
		assert.Contains(t, v[0].Message, "went back from UpgradingAPI to WaitingForWorkers", name)
	}
	// a loss excuses only the step back to waiting for the worker
	further := append(append([]eventlog.Event{}, lost[:len(lost)-1]...), phaseEvent(9.3, "UpgradingWorker", 1, 13))
	require.Len(t, phaseViolations(Judge(Input{History: FromEvents(further), Upgrades: []UpgradeSpec{alpha}})), 1)
}

// TestJudgeStartsPhasesAfreshAfterADeletion: an upgrade deleted and
// created again under its name starts at generation 1 and Pending; without
// the UpgradeDeleted line between, that is Completed → Pending.
func TestJudgeStartsPhasesAfreshAfterADeletion(t *testing.T) {
	done := append(logRun(), phaseEvent(9.5, "Completed", 1, 11))
	again := phaseEvent(12, "Pending", 1, 13)
	deleted := eventlog.Event{T: 10, Event: eventlog.UpgradeDeleted, Namespace: "ns", Name: "u", RV: "12"}

	r := Judge(Input{History: FromEvents(append(append([]eventlog.Event{}, done...), deleted, again)), Upgrades: []UpgradeSpec{alpha}})
	assert.Empty(t, phaseViolations(r), r.Err())

	v := phaseViolations(Judge(Input{History: FromEvents(append(append([]eventlog.Event{}, done...), again)), Upgrades: []UpgradeSpec{alpha}}))
	require.Len(t, v, 1)
	assert.Contains(t, v[0].Message, "left Completed for Pending")
}

// TestJudgeReadsADaemonSetsDesiredCount: a DaemonSet callee of two nodes
// whose second node has no new pod yet is not rolled out; the detailed
// log's WorkloadStatus line says desiredNumberScheduled 2. Without it
// the judge can ask only for one Ready pod and no old one.
func TestJudgeReadsADaemonSetsDesiredCount(t *testing.T) {
	ds := UpgradeSpec{Name: "u", Namespace: "ns", Components: []ComponentSpec{
		{Name: "agent", Deployment: "agent", Kind: eventlog.KindDaemonSet, Image: "agent:2"},
		{Name: "api", Deployment: "api", Image: "api:2", DependsOn: []string{"agent"}},
	}}
	agent := func(t float64, kind, name, image string, rv int) eventlog.Event {
		e := logEvent(t, kind, name, "agent", image, rv)
		e.Kind = eventlog.KindDaemonSet
		return e
	}
	status := eventlog.Event{T: 0, Event: eventlog.WorkloadStatus, Namespace: "ns", Name: "agent", Deployment: "agent", Kind: eventlog.KindDaemonSet, RV: "6",
		Workload: &eventlog.WorkloadCounters{Generation: 1, ObservedGeneration: 1, Spec: 2}}
	run := func(withStatus bool) []eventlog.Event {
		events := []eventlog.Event{
			agent(0, eventlog.DeploymentWrite, "agent", "agent:1", 1),
			agent(0, eventlog.PodCreated, "agent-n1", "agent:1", 2), agent(0, eventlog.PodReady, "agent-n1", "", 3),
			agent(0, eventlog.PodCreated, "agent-n2", "agent:1", 4), agent(0, eventlog.PodReady, "agent-n2", "", 5),
		}
		if withStatus {
			events = append(events, status)
		}
		return append(events,
			logEvent(0, eventlog.DeploymentWrite, "api", "api", "api:1", 7),
			agent(1, eventlog.DeploymentWrite, "agent", "agent:2", 8),
			agent(2, eventlog.PodDeleting, "agent-n1", "", 9), agent(3, eventlog.PodDeleted, "agent-n1", "", 10),
			agent(4, eventlog.PodCreated, "agent-x1", "agent:2", 11), agent(5, eventlog.PodReady, "agent-x1", "", 12),
			agent(6, eventlog.PodDeleting, "agent-n2", "", 13), agent(7, eventlog.PodDeleted, "agent-n2", "", 14),
			logEvent(8, eventlog.DeploymentWrite, "api", "api", "api:2", 15))
	}
	r := Judge(Input{History: FromEvents(run(true)), Upgrades: []UpgradeSpec{ds}})
	assert.Equal(t, porcupine.Illegal, r.Linearizable)
	assert.Contains(t, r.Illegal, `dependency "agent" is not fully rolled out: 1 of 2 pods of agent ready`)

	r = Judge(Input{History: FromEvents(run(false)), Upgrades: []UpgradeSpec{ds}})
	assert.Equal(t, porcupine.Ok, r.Linearizable, "without the desired count one Ready pod and no old one is all the log shows")
}
