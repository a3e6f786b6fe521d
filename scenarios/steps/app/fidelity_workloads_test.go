//go:build e2e && fidelity

package app

import (
	"testing"

	"github.com/lunadas/upgrade-operator/scenarios/fidelity"
	"github.com/lunadas/upgrade-operator/scenarios/fidelity/workloads"
)

// workloadFidelity are the StatefulSet and DaemonSet controller scenarios
// of scenarios/fidelity/workloads for the fidelity report: the simulator's models
// run now, the real controllers' sequences are the committed transcripts
// (make test-workloads-real re-records and re-compares them live). Not on
// the real node, whose report compares the kubelet.
func workloadFidelity(t *testing.T) []fidelity.Scenario {
	if *realNode {
		return nil
	}
	scs, err := workloads.FidelityScenarios(t.Context(), *seed)
	if err != nil {
		t.Errorf("StatefulSet / DaemonSet controller scenarios: %v", err)
	}
	return scs
}
