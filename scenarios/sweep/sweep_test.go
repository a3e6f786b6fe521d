package sweep

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
)

func TestSampledSweepOfTheDemo(t *testing.T) {
	started, done := 0, 0
	rep, err := Run(context.Background(), Config{Scenario: "demo", Seed: 1, Stride: 37, Workers: 1,
		Started: func(n int) { started = n }, Done: func() { done++ }})
	require.NoError(t, err)
	assert.Greater(t, rep.Calls, 300, "reads are API calls in the sweep")
	assert.Equal(t, (rep.Calls+36)/37, rep.Runs)
	assert.Equal(t, rep.Runs, started)
	assert.Equal(t, rep.Runs, done)
	assert.Empty(t, rep.Failures)
	assert.Contains(t, rep.String(), "demo")
}

func TestCheckWantsEachImageWrittenOnce(t *testing.T) {
	o := faults.Run(context.Background(), faults.RunConfig{Schedule: faults.Schedule{Seed: 1, Scenario: "demo",
		Faults: []faults.Fault{CrashAfter(0)}}})
	require.False(t, o.Failed(), "%v", o.Violations)
	assert.Empty(t, Check(o))
	o.Writes = append(o.Writes, o.Writes[0])
	assert.Equal(t, []string{"deployment job-system/job-worker written 2 times with registry.example.com/job-worker:v2.0.0, want once"}, Check(o))
	assert.Equal(t, "crash@1", CrashAfter(0).String(), "down is the default, 2s")
}
