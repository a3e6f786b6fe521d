package appupgrade

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// untilPhase runs passes until component name reaches ph (at most 10).
func (w *world) untilPhase(t *testing.T, name string, ph v1beta1.ComponentPhase) {
	t.Helper()
	for range 10 {
		if w.phase(name) == ph {
			return
		}
		w.pass(t)
	}
	require.Equal(t, ph, w.phase(name))
}

// TestDecideRecoversWhenTheFailedRolloutCompletes: a component Failed by
// its rollout goes back to Rolled (RolloutRecovered) once its Deployment is
// observed fully rolled out at the target image, and its dependent proceeds.
func TestDecideRecoversWhenTheFailedRolloutCompletes(t *testing.T) {
	w := newWorld(comp("worker", "job-worker"), comp("api", "job-api", "worker"))
	w.untilPhase(t, "worker", v1beta1.ComponentRollingOut)
	w.state["worker"] = rollout.Failed
	p := w.pass(t)
	require.Equal(t, v1beta1.PhaseFailed, p.Phase)
	require.Equal(t, v1beta1.ComponentBlocked, w.phase("api"))

	w.state["worker"] = rollout.Progressing // still rolling: stays Failed, nothing written
	p = w.pass(t)
	require.Equal(t, v1beta1.PhaseFailed, p.Phase)
	require.Empty(t, p.Writes)

	w.state["worker"] = rollout.Rolled
	p = w.pass(t)
	require.Equal(t, v1beta1.PhaseProgressing, p.Phase)
	require.Equal(t, ReasonRecovered, p.Reason)
	require.Equal(t, v1beta1.ComponentRolled, w.phase("worker"))
	require.Equal(t, ReasonRecovered, p.Components[0].Reason)
	require.Equal(t, v1beta1.ComponentUpgrading, w.phase("api"), "the dependent proceeds")

	w.pass(t) // writes the API
	require.Equal(t, []string{"worker", "api"}, w.writes)
	w.state["api"] = rollout.Rolled
	require.Equal(t, v1beta1.PhaseCompleted, w.pass(t).Phase)
}

// TestDecideDoesNotRecoverAComponentNotAtTarget: the Deployment rolled out
// some other image (someone rolled it back): still Failed.
func TestDecideDoesNotRecoverAComponentNotAtTarget(t *testing.T) {
	w := newWorld(comp("worker", "job-worker"), comp("api", "job-api", "worker"))
	w.untilPhase(t, "worker", v1beta1.ComponentRollingOut)
	w.state["worker"] = rollout.Failed
	w.pass(t)
	w.image["worker"], w.state["worker"] = "worker:v1", rollout.Rolled
	p := w.pass(t)
	require.Equal(t, v1beta1.PhaseFailed, p.Phase)
	require.Equal(t, v1beta1.ComponentFailed, w.phase("worker"))
}

// TestDecideConfigErrorStaysTerminal: a configuration error is not a
// rollout failure; only a spec change starts over.
func TestDecideConfigErrorStaysTerminal(t *testing.T) {
	w := newWorld(comp("worker", "job-worker"), comp("api", "job-api", "worker"))
	w.pass(t)
	w.u.Status.Phase = v1beta1.PhaseFailed
	w.u.Status.Components[0].Phase = v1beta1.ComponentFailed
	w.u.Status.Conditions = []metav1.Condition{{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: ReasonConfigError}}
	w.image["worker"] = "worker:v2"
	p := Decide(w.graph())
	require.Equal(t, v1beta1.PhaseFailed, p.Phase)
	require.Equal(t, ReasonConfigError, p.Reason)
	require.False(t, MayRecover(w.u))
}

// TestDecideRecoveryOfOneBranchKeepsTheOtherBlocked: in a diamond with both
// middle components Failed, one recovering leaves api Blocked by the other.
func TestDecideRecoveryOfOneBranchKeepsTheOtherBlocked(t *testing.T) {
	w := newWorld(comp("db", "db"), comp("worker", "w", "db"), comp("indexer", "i", "db"), comp("api", "api", "worker", "indexer"))
	w.untilPhase(t, "db", v1beta1.ComponentRollingOut)
	w.state["db"] = rollout.Rolled
	w.untilPhase(t, "worker", v1beta1.ComponentRollingOut)
	w.untilPhase(t, "indexer", v1beta1.ComponentRollingOut)
	w.state["worker"], w.state["indexer"] = rollout.Failed, rollout.Failed
	require.Equal(t, v1beta1.PhaseFailed, w.pass(t).Phase)
	w.state["worker"] = rollout.Rolled
	p := w.pass(t)
	require.Equal(t, v1beta1.PhaseFailed, p.Phase, "indexer is still Failed")
	require.Equal(t, v1beta1.ComponentRolled, w.phase("worker"))
	require.Equal(t, v1beta1.ComponentBlocked, w.phase("api"))
	w.state["indexer"] = rollout.Rolled
	p = w.pass(t)
	require.Equal(t, v1beta1.PhaseProgressing, p.Phase)
	require.Equal(t, v1beta1.ComponentUpgrading, w.phase("api"))
}

// TestDecidePausedDeploymentHasItsOwnReason: a paused Deployment is a state
// that waits on a person: the component and the upgrade say
// DeploymentPaused, not the generic Progressing.
func TestDecidePausedDeploymentHasItsOwnReason(t *testing.T) {
	w := newWorld(comp("worker", "job-worker"), comp("api", "job-api", "worker"))
	w.untilPhase(t, "worker", v1beta1.ComponentRollingOut)
	g := w.graph()
	g.Components[0].Rollout = rollout.Verdict{State: rollout.Progressing, Reason: rollout.ReasonDeploymentPaused, Message: "deployment ns/job-worker is paused: resume it to continue the rollout"}
	p := Decide(g)
	require.Equal(t, v1beta1.PhaseProgressing, p.Phase)
	require.Equal(t, ReasonDeploymentPaused, p.Reason)
	require.Equal(t, ReasonDeploymentPaused, p.Components[0].Reason)
	require.Contains(t, p.Message, "resume it")
	require.True(t, WaitingReasons[p.Reason])
}
