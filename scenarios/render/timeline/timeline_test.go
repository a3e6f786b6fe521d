package timeline

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// log is a two-Deployment upgrade: the old worker pod terminates from 10 s
// to 20 s, the API image is written at 20 s.
var log = []eventlog.Event{
	{T: 0, Event: eventlog.DeploymentWrite, Namespace: "ns", Name: "api", Deployment: "api", Image: "r/api:v1"},
	{T: 0, Event: eventlog.DeploymentWrite, Namespace: "ns", Name: "worker", Deployment: "worker", Image: "r/worker:v1"},
	{T: 0, Event: eventlog.PodCreated, Namespace: "ns", Name: "worker-a", Deployment: "worker", Image: "r/worker:v1"},
	{T: 2, Event: eventlog.PodReady, Namespace: "ns", Name: "worker-a", Deployment: "worker", Image: "r/worker:v1"},
	{T: 5, Event: eventlog.DeploymentWrite, Namespace: "ns", Name: "worker", Deployment: "worker", Image: "r/worker:v2"},
	{T: 5, Event: eventlog.Phase, Namespace: "ns", Name: "up", Phase: "WaitingForWorkers"},
	{T: 5, Event: eventlog.PodCreated, Namespace: "ns", Name: "worker-b", Deployment: "worker", Image: "r/worker:v2"},
	{T: 10, Event: eventlog.PodReady, Namespace: "ns", Name: "worker-b", Deployment: "worker", Image: "r/worker:v2"},
	{T: 10, Event: eventlog.PodDeleting, Namespace: "ns", Name: "worker-a", Deployment: "worker", Image: "r/worker:v1"},
	{T: 20, Event: eventlog.PodDeleted, Namespace: "ns", Name: "worker-a", Deployment: "worker", Image: "r/worker:v1"},
	{T: 20, Event: eventlog.DeploymentWrite, Namespace: "ns", Name: "api", Deployment: "api", Image: "r/api:v2"},
	{T: 20, Event: eventlog.Phase, Namespace: "ns", Name: "up", Phase: "WaitingForAPI"},
	{T: 30, Event: eventlog.Phase, Namespace: "ns", Name: "up", Phase: "Completed"},
}

func render(t *testing.T, in Input) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, Render(&b, in))
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "well-formed XML")
	}
	return b.String()
}

func TestRenderDrawsPodsWritesPhasesAndFaults(t *testing.T) {
	svg := render(t, Input{Title: "t <&>", Events: log, Order: []string{"worker", "api"},
		Faults: []Span{{Label: "crash@3", Start: 12, End: 14}}})
	assert.Contains(t, svg, "t &lt;&amp;&gt;", "the title is escaped")
	assert.Less(t, strings.Index(svg, "Deployment worker"), strings.Index(svg, "Deployment api"), "worker first")
	assert.Contains(t, svg, "worker-a terminating: 10.0s–20.0s")
	assert.Contains(t, svg, "worker-b ready: 10.0s–")
	assert.Contains(t, svg, "image written r/api:v2 at 20.0s")
	assert.Contains(t, svg, "⚡ crash@3")
	for _, p := range []string{"WaitingForWorkers", "WaitingForAPI", "Completed"} {
		assert.Contains(t, svg, ">"+p+"</text>")
	}
	// the old worker pod's terminating bar ends where the API write line is
	term := regexp.MustCompile(`<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"[^>]*><title>worker-a terminating`).FindStringSubmatch(svg)
	line := regexp.MustCompile(`<line x1="([\d.]+)"[^>]*><title>api image r/api:v2 written`).FindStringSubmatch(svg)
	require.NotNil(t, term)
	require.NotNil(t, line)
	x, _ := strconv.ParseFloat(term[1], 64)
	w, _ := strconv.ParseFloat(term[2], 64)
	apiX, _ := strconv.ParseFloat(line[1], 64)
	assert.InDelta(t, apiX, x+w, 0.2, "terminating until the API write")
}

func TestRenderEmptyLog(t *testing.T) {
	svg := render(t, Input{Title: "nothing"})
	assert.Contains(t, svg, "nothing")
}
