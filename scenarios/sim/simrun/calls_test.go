package simrun

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/controller"
)

// claimRolledOnWrite is a reconciler that claims a component Rolled (and
// the upgrade Completed) as soon as its image is written: every write is
// in order, only the claim is early.
func claimRolledOnWrite(r *controller.ApplicationUpgradeReconciler) {
	r.DecideFunc = func(g appupgrade.Graph) appupgrade.Plan {
		p := appupgrade.Decide(g)
		if len(p.Writes) > 0 || p.Phase.Terminal() {
			return p
		}
		rolled := 0
		for i := range p.Components {
			if p.Components[i].Phase == v1beta1.ComponentRollingOut && p.Components[i].Name == "api" {
				p.Components[i].Phase, p.Components[i].Reason = v1beta1.ComponentRolled, appupgrade.ReasonCompleted
			}
			if p.Components[i].Phase == v1beta1.ComponentRolled {
				rolled++
			}
		}
		if rolled == len(p.Components) {
			p.Phase, p.Reason, p.Message = v1beta1.PhaseCompleted, appupgrade.ReasonCompleted, "Upgrade completed (early)"
		}
		return p
	}
}

// With or without RecordCalls the judge catches a Completed claimed while
// the API's old pods still run (porcupine's phase claims): from the
// recorded status patch, or from the event log's Phase line
// (judge.LogClaims) where no call was recorded.
func TestRecordCallsJudgesPhaseClaims(t *testing.T) {
	for _, record := range []bool{false, true} {
		res, err := Run(context.Background(), Config{Objects: demoObjects(t), Seed: 1, Reconciler: claimRolledOnWrite, RecordCalls: record})
		require.NoError(t, err)
		require.Equal(t, "Completed", string(res.Upgrades[0].Status.Phase))
		require.False(t, res.Judged.OK(), "record=%t: the status claiming Completed is judged", record)
		assert.Contains(t, res.Judged.Summary(), "phase Completed claimed while the API is not fully rolled out")
		t.Logf("record=%t verdict: %s", record, res.Judged.Summary())
		if record {
			assert.NotEmpty(t, res.Judged.History().Ops, "the calls were recorded")
		}
	}
}
