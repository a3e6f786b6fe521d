package checks

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

func ev(t float64, kind, name, dep, image, rv string) eventlog.Event {
	return eventlog.Event{T: t, Event: kind, Namespace: "ns", Name: name, Deployment: dep, Image: image, RV: rv}
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
	assert.Contains(t, rep.Violations[0], "old worker pod w-old (image w:1)")
}

func TestOrderedUsesResourceVersionsWhenAllHaveOne(t *testing.T) {
	events := []eventlog.Event{ev(2, "x", "b", "", "", "20"), ev(1, "x", "a", "", "", "10")}
	assert.Equal(t, "a", Ordered(events)[0].Name)
	events[0].RV = ""
	assert.Equal(t, "b", Ordered(events)[0].Name, "recording order when an rv is missing")
}
