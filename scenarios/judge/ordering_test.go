package judge

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// ev is an event of the log as version 2 records it: a write's HashAfter
// and a pod's Hash are "h-<image>", its containers one of that image.
func ev(t float64, kind, name, dep, image, rv string) eventlog.Event {
	e := eventlog.Event{T: t, Event: kind, Namespace: "ns", Name: name, Deployment: dep, Image: image, RV: rv}
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

var pair = Pair{Namespace: "ns", Worker: "w", API: "a"}

func safeRun() []eventlog.Event {
	return []eventlog.Event{
		ev(0, eventlog.DeploymentWrite, "w", "w", "w:1", "1"),
		ev(0, eventlog.DeploymentWrite, "a", "a", "a:1", "2"),
		ev(0, eventlog.PodCreated, "w-old", "w", "w:1", "3"),
		ev(1, eventlog.DeploymentWrite, "w", "w", "w:2", "4"),
		ev(2, eventlog.PodCreated, "w-new", "w", "w:2", "5"),
		ev(3, eventlog.PodDeleting, "w-old", "w", "w:1", "6"),
		ev(9, eventlog.PodDeleted, "w-old", "w", "w:1", "7"),
		ev(9.25, eventlog.DeploymentWrite, "a", "a", "a:2", "8"),
	}
}

func TestOrderingSafeRun(t *testing.T) {
	rep := Ordering(safeRun(), pair)
	assert.Empty(t, rep.Violations)
	assert.Equal(t, 1, rep.APIWrites)
	assert.Equal(t, map[string]int{"w:2": 1}, rep.WorkerWrites)
	assert.InDelta(t, 0.25, rep.Handoff, 1e-9)
}

func TestOrderingCatchesAWriteWhileAnOldPodTerminates(t *testing.T) {
	events := safeRun()
	// The API write lands between PodDeleting and PodDeleted: counters said done.
	events[7].RV, events[6].RV = "7", "8"
	rep := Ordering(events, pair)
	assert.Len(t, rep.Violations, 1)
	assert.Contains(t, rep.Violations[0], "old worker pod w-old (hash h-w:1, c=w:1) still exists (terminating)")
}

// TestOrderingJudgesOnlyTheOperatorsWrites: the same early API write is a
// violation when the operator's field manager owns the image after it (or
// the log does not say), and not when only a GitOps tool does
// (gitops-revert re-applying the API's previous image, seed 2742).
func TestOrderingJudgesOnlyTheOperatorsWrites(t *testing.T) {
	for owner, want := range map[string]int{"": 1, "upgrade-operator": 1, "kubectl,upgrade-operator": 1, "kustomize-controller": 0} {
		events := safeRun()
		events[7].RV, events[6].RV = "7", "8"
		events[7].ImageOwner = owner
		rep := Ordering(events, pair)
		assert.Len(t, rep.Violations, want, "image owned by %q", owner)
		assert.Equal(t, want, rep.APIWrites, "image owned by %q", owner)
	}
}

// sidecarRun: the worker's pods list a proxy first; every pod, old or
// new, has the same first container. Old is told by the template hash.
func sidecarRun(apiRV string) []eventlog.Event {
	pod := func(t float64, kind, name, hash, worker, rv string) eventlog.Event {
		return eventlog.Event{T: t, Event: kind, Namespace: "ns", Name: name, Deployment: "w", Image: "envoy:1.30.0", RV: rv,
			Hash: hash, ReplicaSet: "w-" + hash, Containers: []eventlog.Container{{Name: "proxy", Image: "envoy:1.30.0"}, {Name: "worker", Image: worker}}}
	}
	tmpl := func(worker string) []eventlog.Container {
		return []eventlog.Container{{Name: "proxy", Image: "envoy:1.30.0"}, {Name: "worker", Image: worker}}
	}
	return []eventlog.Event{
		{T: 0, Event: eventlog.DeploymentWrite, Namespace: "ns", Name: "w", Deployment: "w", RV: "1", HashAfter: "aaa", Containers: tmpl("w:1")},
		ev(0, eventlog.DeploymentWrite, "a", "a", "a:1", "2"),
		pod(0, eventlog.PodCreated, "w-aaa-1", "aaa", "w:1", "3"),
		{T: 1, Event: eventlog.DeploymentWrite, Namespace: "ns", Name: "w", Deployment: "w", RV: "4", Container: "worker", Image: "w:2",
			HashBefore: "aaa", HashAfter: "bbb", Containers: tmpl("w:2")},
		pod(2, eventlog.PodCreated, "w-bbb-1", "bbb", "w:2", "5"),
		pod(3, eventlog.PodDeleting, "w-aaa-1", "aaa", "w:1", "6"),
		pod(9, eventlog.PodDeleted, "w-aaa-1", "aaa", "w:1", "7"),
		ev(9.25, eventlog.DeploymentWrite, "a", "a", "a:2", apiRV),
	}
}

func TestOrderingJudgesASidecarFirstWorkerByTemplateHash(t *testing.T) {
	rep := Ordering(sidecarRun("8"), pair)
	assert.Empty(t, rep.Violations, "new pods share the proxy image with the old ones and are not old")
	assert.Equal(t, map[string]int{"w:2": 1}, rep.WorkerWrites, "the sidecar-first Deployment's creation is not a write")
	assert.InDelta(t, 0.25, rep.Handoff, 1e-9)

	early := sidecarRun("6")
	early[6].RV, early[7].RV = "8", "6"
	rep = Ordering(early, pair)
	assert.Len(t, rep.Violations, 1, "an API write while the old pod runs is caught")
	assert.Contains(t, rep.Violations[0], "w-aaa-1 (hash aaa, proxy=envoy:1.30.0, worker=w:1)")
}

func TestOrderingJudgesAnEdgeAcrossNamespaces(t *testing.T) {
	events := safeRun()
	for i := range events {
		if events[i].Name != "a" {
			events[i].Namespace = "data"
		}
	}
	cross := Pair{Namespace: "ns", API: "a", Worker: "w", WorkerNamespace: "data"}
	rep := Ordering(events, cross)
	assert.Empty(t, rep.Violations)
	assert.InDelta(t, 0.25, rep.Handoff, 1e-9)
	events[7].RV, events[6].RV = "7", "8"
	assert.Len(t, Ordering(events, cross).Violations, 1)
	assert.Empty(t, Ordering(events, pair).Violations, "the same edge read in one namespace sees no worker")
}

func TestOrderedUsesResourceVersionsWhenAllHaveOne(t *testing.T) {
	events := []eventlog.Event{ev(2, "x", "b", "", "", "20"), ev(1, "x", "a", "", "", "10")}
	assert.Equal(t, "a", Ordered(events)[0].Name)
	events[0].RV = ""
	assert.Equal(t, "b", Ordered(events)[0].Name, "recording order when an rv is missing")
}
