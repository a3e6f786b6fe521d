package controller

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

func TestMetricsDuringAnUpgrade(t *testing.T) {
	writesBefore := testutil.ToFloat64(imageWrites.WithLabelValues("api"))
	handoffsBefore := handoffCount(t)
	w := newWorld(t, deployment("job-worker", "worker", "w:v1"), deployment("job-api", "api", "a:v1"), upgrade("upgrade-v2"))
	w.rollOut("job-worker", "")
	w.rollOut("job-api", "")
	for range 3 {
		w.reconcile("upgrade-v2")
	}
	w.rollOut("job-worker", "")
	require.Equal(t, v1.PhaseUpgradingAPI, w.reconcile("upgrade-v2"))
	require.Equal(t, v1.PhaseWaitingForAPI, w.reconcile("upgrade-v2"))
	assert.Equal(t, writesBefore+1, testutil.ToFloat64(imageWrites.WithLabelValues("api")))
	assert.Equal(t, handoffsBefore+1, handoffCount(t), "one handoff observation per API write")

	SetPhaseMetricsReader(w.c)
	expected := "# HELP upgrade_operator_applicationupgrades ApplicationUpgrades by phase.\n# TYPE upgrade_operator_applicationupgrades gauge\n"
	got, err := testutil.CollectAndLint(phases)
	require.NoError(t, err)
	assert.Empty(t, got)
	require.NoError(t, testutil.CollectAndCompare(phases, strings.NewReader(expected+
		`upgrade_operator_applicationupgrades{phase="Completed"} 0
upgrade_operator_applicationupgrades{phase="Failed"} 0
upgrade_operator_applicationupgrades{phase="Pending"} 0
upgrade_operator_applicationupgrades{phase="UpgradingAPI"} 0
upgrade_operator_applicationupgrades{phase="UpgradingWorkers"} 0
upgrade_operator_applicationupgrades{phase="WaitingForAPI"} 1
upgrade_operator_applicationupgrades{phase="WaitingForWorkers"} 0
`)))
}

func handoffCount(t *testing.T) uint64 {
	var m dto.Metric
	require.NoError(t, handoff.Write(&m))
	return m.GetHistogram().GetSampleCount()
}
