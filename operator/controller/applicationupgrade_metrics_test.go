package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

func TestMetricsDuringAnUpgrade(t *testing.T) {
	handoffsBefore := handoffCount(t)
	w := newWorld(t, deployment("job-worker", "worker", "w:v1"), deployment("job-api", "api", "a:v1"), upgrade("upgrade-v2"))
	w.rollOut("job-worker", "")
	w.rollOut("job-api", "")
	for range 3 {
		w.reconcile("upgrade-v2")
	}
	w.rollOut("job-worker", "")
	sumBefore := handoffSum(t)
	writesBefore := testutil.ToFloat64(imageWrites.WithLabelValues("Deployment"))
	require.Equal(t, v1.PhaseUpgradingAPI, w.reconcile("upgrade-v2"))
	w.r.Clock.(*clocktesting.FakeClock).Step(250 * time.Millisecond)
	require.Equal(t, v1.PhaseWaitingForAPI, w.reconcile("upgrade-v2"))
	assert.Equal(t, writesBefore+1, testutil.ToFloat64(imageWrites.WithLabelValues("Deployment")))
	assert.Equal(t, handoffsBefore+1, handoffCount(t), "one handoff observation per dependent's write")
	assert.InDelta(t, 0.25, handoffSum(t)-sumBefore, 1e-9, "from the pass that saw the worker rolled to the API write, on the reconciler's clock")

	SetPhaseMetricsReader(w.c)
	expected := "# HELP upgrade_operator_applicationupgrades ApplicationUpgrades by phase (v1beta1: Pending, Progressing, Completed, Failed).\n# TYPE upgrade_operator_applicationupgrades gauge\n"
	got, err := testutil.CollectAndLint(phases)
	require.NoError(t, err)
	assert.Empty(t, got)
	require.NoError(t, testutil.CollectAndCompare(phases, strings.NewReader(expected+
		`upgrade_operator_applicationupgrades{phase="Completed"} 0
upgrade_operator_applicationupgrades{phase="Failed"} 0
upgrade_operator_applicationupgrades{phase="Pending"} 0
upgrade_operator_applicationupgrades{phase="Progressing"} 1
`)))
}

func handoffCount(t *testing.T) uint64 {
	var m dto.Metric
	require.NoError(t, handoff.Write(&m))
	return m.GetHistogram().GetSampleCount()
}

func handoffSum(t *testing.T) float64 {
	var m dto.Metric
	require.NoError(t, handoff.Write(&m))
	return m.GetHistogram().GetSampleSum()
}
