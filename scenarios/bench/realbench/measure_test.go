package realbench

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// logOf numbers the events' resourceVersions in the order given.
func logOf(events ...eventlog.Event) []eventlog.Event {
	for i := range events {
		events[i].Namespace = "ns"
		events[i].RV = strconv.Itoa(100 + i)
	}
	return events
}

// write and pod record as event log v2 does: the template hash of image
// img is "h-<img>".
func write(t float64, dep, img string) eventlog.Event {
	return eventlog.Event{T: t, Event: eventlog.DeploymentWrite, Name: dep, Deployment: dep, Image: img, Container: "c", HashAfter: "h-" + img}
}

func pod(t float64, kind, dep, name, img string) eventlog.Event {
	return eventlog.Event{T: t, Event: kind, Name: name, Deployment: dep, Image: img, Hash: "h-" + img}
}

var up = Upgrade{Namespace: "ns", Worker: "w", API: "a", WorkerImage: "w:2", APIImg: "a:2", WorkerReplicas: 1, APIReplicas: 1}

func TestMeasureOrdered(t *testing.T) {
	events := logOf(
		write(0, "w", "w:1"), write(0, "a", "a:1"),
		pod(0.1, eventlog.PodCreated, "w", "w-old", "w:1"), pod(0.1, eventlog.PodCreated, "a", "a-old", "a:1"),
		write(1, "w", "w:2"),
		pod(1.1, eventlog.PodCreated, "w", "w-new", "w:2"), pod(3, eventlog.PodReady, "w", "w-new", "w:2"),
		pod(3.1, eventlog.PodDeleting, "w", "w-old", "w:1"), pod(8, eventlog.PodDeleted, "w", "w-old", "w:1"),
		write(8.02, "a", "a:2"),
		pod(8.1, eventlog.PodCreated, "a", "a-new", "a:2"), pod(10, eventlog.PodReady, "a", "a-new", "a:2"),
		pod(15, eventlog.PodDeleted, "a", "a-old", "a:1"),
		eventlog.Event{T: 15.01, Event: eventlog.Phase, Name: "u", Phase: "Completed"},
	)
	tl := Measure(events, up)
	assert.Equal(t, Moments{WorkerWrite: 1, APIWrite: 8.02, WorkerGone: 8, APIGone: 15, Completed: 15.01}, tl)
	assert.InDelta(t, 0.02, tl.Handoff(), 1e-9)
	assert.True(t, tl.Done())
}

// The poller's pattern: the API image written while the old worker pod
// still terminates — a negative handoff and one violation.
func TestMeasureEarlyAPIWrite(t *testing.T) {
	events := logOf(
		write(0, "w", "w:1"), write(0, "a", "a:1"),
		pod(0.1, eventlog.PodCreated, "w", "w-old", "w:1"),
		write(1, "w", "w:2"),
		pod(1.1, eventlog.PodCreated, "w", "w-new", "w:2"), pod(3, eventlog.PodReady, "w", "w-new", "w:2"),
		pod(3.1, eventlog.PodDeleting, "w", "w-old", "w:1"),
		write(4, "a", "a:2"),
		pod(8, eventlog.PodDeleted, "w", "w-old", "w:1"),
	)
	tl := Measure(events, up)
	assert.InDelta(t, -4, tl.Handoff(), 1e-9)
	assert.Equal(t, 1, tl.OldWorkerPodsAtAPIWrite)
	assert.Contains(t, tl.Judge, "API image a:2 written while the worker is not fully rolled out: old pod w-old", "the one judge's model")
	assert.False(t, tl.Done(), "the API rollout has not ended")
	assert.True(t, math.IsNaN(Moments{WorkerWrite: -1, APIWrite: -1, WorkerGone: -1, APIGone: -1}.Handoff()))
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{0.03, 0.01, math.NaN(), 0.02, 0.5})
	assert.Equal(t, 4, s.N)
	assert.InDelta(t, 0.14, s.Mean, 1e-9)
	assert.Equal(t, 0.02, s.P50)
	assert.Equal(t, 0.5, s.P99)
	assert.Equal(t, 0.5, s.Max)
	assert.Equal(t, 0.01, s.Min)
	assert.Equal(t, 0, Summarize(nil).N)
}

func TestStatusSettled(t *testing.T) {
	events := logOf(
		write(0, "w", "w:2"), // rv 100: the worker's template, no rewrite yet
		pod(0.1, eventlog.PodCreated, "w", "w-old", "w:1"),
		pod(8, eventlog.PodDeleted, "w", "w-old", "w:1"), // rv 102
	)
	done := DeploymentStatus{Name: "w", Generation: 2, ObservedGeneration: 2, Spec: 1, Replicas: 1, Updated: 1, Available: 1, Terminating: 0}
	early, stale, late, api := done, done, done, done
	early.T, early.RV = 5, "99"                          // counters done while the old pod terminated: before the deletion
	stale.T, stale.RV, stale.Terminating = 8.1, "103", 1 // not yet updated
	late.T, late.RV = 8.3, "104"
	api.T, api.RV, api.Name = 8.2, "103", "a"
	assert.Equal(t, 8.3, StatusSettled([]DeploymentStatus{early, stale, api, late}, events, up))
	assert.Equal(t, -1.0, StatusSettled([]DeploymentStatus{early}, events, up))
}
