package deploy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

func rollbackStrategy(state vim.StrategyState) *Strategy {
	return &Strategy{Kind: plan.SwDeploy, UUID: "uuid-rb", State: state, Target: "starlingx-13.01.2", Rollback: true,
		Progress: "apply(20%)/stg:(1/5) sw-upgrade-rollback-start"}
}

// TestAbortReverts walks the abort of a patch step through the real
// system's mechanisms: stop the step's strategy, roll the USM deploy back
// with a rollback strategy, delete it, end None.
func TestAbortReverts(t *testing.T) {
	const from = "starlingx-13.01.0 / v1.33.0"
	aborting := func() *v1alpha1.Upgrade {
		return upgrade(from, 3, 2, deployingTo(from, "starlingx-13.01.2 / v1.33.0", "starlingx-13.01.2", "starlingx-13.01.2"))
	}
	withDeploy := func(state string) Live {
		l := demoLive(from, "duplex")
		l.Deploy = &USMDeploy{From: "13.01.0", To: "13.01.2", State: state}
		l.DeployInProgress = "13.01.0 → 13.01.2 (" + state + ")"
		return l
	}
	cases := []struct {
		name     string
		live     Live
		strategy *Strategy
		action   string
		status   v1alpha1.DeployStatus
		phase    Phase
		reason   string // status.activeDeploy.statusReason contains
		event    string
	}{
		{name: "building: force delete", live: demoLive(from, "duplex"), strategy: sw("starlingx-13.01.2", vim.StateBuilding),
			action: "delete sw-deploy uuid-sw", status: "Deploying", phase: PhaseAborting},
		{name: "applying: abort", live: withDeploy("host"), strategy: sw("starlingx-13.01.2", vim.StateApplying),
			action: "abort sw-deploy uuid-sw", status: "Deploying", phase: PhaseAborting, event: ReasonAbortRequested},
		{name: "aborted: delete", live: withDeploy("host"), strategy: sw("starlingx-13.01.2", vim.StateAborted),
			action: "delete sw-deploy uuid-sw", status: "Deploying", phase: PhaseAborting},
		{name: "a deploy is left: create the rollback strategy", live: withDeploy("host"),
			action: "create sw-deploy rollback", status: "Deploying", phase: PhaseAborting, event: ReasonDeployRollback},
		{name: "a deploy still starting: wait for it", live: withDeploy("start"),
			action: "none", status: "Deploying", phase: PhaseAborting},
		{name: "rollback building: wait", live: withDeploy("host"), strategy: rollbackStrategy(vim.StateBuilding),
			action: "none", status: "Deploying", phase: PhaseAborting},
		{name: "rollback ready: apply", live: withDeploy("host"), strategy: rollbackStrategy(vim.StateReadyToApply),
			action: "apply sw-deploy uuid-rb", status: "Deploying", phase: PhaseAborting},
		{name: "rollback applied: delete", live: demoLive(from, "duplex"), strategy: rollbackStrategy(vim.StateApplied),
			action: "delete sw-deploy uuid-rb", status: "Deploying", phase: PhaseAborting},
		{name: "rollback failed: stop and say what to do", live: withDeploy("host-rollback-failed"), strategy: rollbackStrategy(vim.StateApplyFailed),
			action: "none", status: "Failed", phase: PhaseFailed, reason: "sw-manager sw-deploy-strategy create --rollback", event: ReasonDeployFailed},
		{name: "a patch removal left: never rolled back (USM refuses its abort); wait with what to do", live: func() Live {
			l := demoLive(from, "duplex")
			l.Deploy = &USMDeploy{From: "13.01.2", To: "13.01.0", State: "start-done"}
			return l
		}(), action: "none", status: "Deploying", phase: PhaseBlocked},
		{name: "nothing left: back on deployFromRelease", live: demoLive(from, "duplex"),
			action: "none", status: "None", phase: PhaseIdle, reason: "aborted; the system still runs " + from, event: ReasonDeployAborted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			live := c.live
			live.Strategy = c.strategy
			d := Next(Input{Upgrade: aborting(), Live: live, Now: t0})
			assert.Equal(t, c.action, d.Action.String(), d.Message)
			assert.Equal(t, c.status, d.Status.ActiveDeploy.Status)
			assert.Equal(t, c.phase, d.Phase, d.Message)
			assert.Contains(t, d.Status.ActiveDeploy.StatusReason, c.reason)
			if c.event != "" {
				require.NotEmpty(t, d.Events)
				assert.Equal(t, c.event, d.Events[0].Reason)
			} else {
				assert.Empty(t, d.Events)
			}
		})
	}
}

func TestAbortKubeStepOnDuplexIsNotSent(t *testing.T) {
	const from = "starlingx-13.01.0 / v1.33.0"
	u := upgrade(from, 3, 2, deployingTo(from, "starlingx-13.01.0 / v1.34.1", "k8s-v1.34.1", "k8s-v1.34.1"))
	live := demoLive(from, "duplex")
	live.Strategy = kube("v1.34.1", vim.StateApplying)
	d := Next(Input{Upgrade: u, Live: live, Now: t0})
	assert.Equal(t, "none", d.Action.String())
	assert.Equal(t, "AbortNotSupported", d.Reason)
	assert.Contains(t, d.Message, "the VIM refuses to abort a kube-upgrade strategy on a duplex system")

	live = demoLive(from, "simplex")
	live.Strategy = kube("v1.34.1", vim.StateApplying)
	d = Next(Input{Upgrade: u, Live: live, Now: t0})
	assert.Equal(t, "abort kube-upgrade uuid-kube", d.Action.String(), "simplex: the VIM aborts and sysinv restores")

	past := demoLive("starlingx-13.01.0 / v1.34.1", "duplex")
	d = Next(Input{Upgrade: u, Live: past, Now: t0})
	assert.Equal(t, v1alpha1.DeployStatusFailed, d.Status.ActiveDeploy.Status)
	assert.Contains(t, d.Status.ActiveDeploy.StatusReason, "aborted after 1 of 1 step(s); the system runs starlingx-13.01.0 / v1.34.1, not starlingx-13.01.0 / v1.33.0: kubernetes is never downgraded")
}

func TestLeftoverDeployIsRolledBackBeforeTheNextStep(t *testing.T) {
	const from = "starlingx-13.01.0 / v1.33.0"
	u := upgrade("starlingx-13.01.1 / v1.33.0", 2, 1, nil)
	live := demoLive(from, "duplex")
	live.Deploy = &USMDeploy{From: "13.01.0", To: "13.01.2", State: "start-failed"}
	d := Next(Input{Upgrade: u, Live: live, Now: t0})
	assert.Equal(t, "create sw-deploy rollback", d.Action.String())
	assert.Equal(t, PhaseDeploying, d.Phase)
	assert.Equal(t, []string{ReasonDeployStarted, ReasonDeployRollback}, reasons(d.Events))

	live.Deploy.To = "13.01.1" // the step's own deploy: its strategy resumes it
	d = Next(Input{Upgrade: u, Live: live, Now: t0})
	assert.Equal(t, "create sw-deploy(starlingx-13.01.1)", d.Action.String())

	live.Strategy = rollbackStrategy(vim.StateApplying) // not deploying: another's rollback is waited for
	d = Next(Input{Upgrade: upgrade(from, 1, 1, nil), Live: live, Now: t0})
	assert.Equal(t, "none", d.Action.String())
	assert.Equal(t, PhaseBlocked, d.Phase)
}

func TestAbortRefusedAsksAgain(t *testing.T) {
	const from = "starlingx-13.01.0 / v1.33.0"
	u := upgrade(from, 3, 2, deployingTo(from, "starlingx-13.01.2 / v1.33.0", "starlingx-13.01.2", "starlingx-13.01.2"))
	live := demoLive(from, "duplex")
	live.Strategy = sw("starlingx-13.01.2", vim.StateApplying)
	d := Next(Input{Upgrade: u, Live: live, Now: t0})
	require.Equal(t, ActAbort, d.Action.Kind)
	refusal := errors.New("400 Abort rejected: cannot abort during sw-upgrade-controllers stage.")
	r := AbortRefused(u, d, refusal, t0)
	assert.Equal(t, ActNone, r.Action.Kind)
	assert.Equal(t, RequeueActive, r.Requeue)
	assert.Equal(t, []string{ReasonAbortRefused}, reasons(r.Events))
	assert.Equal(t, v1alpha1.DeployStatusDeploying, r.Status.ActiveDeploy.Status)
	u.Status = r.Status
	again := AbortRefused(u, Next(Input{Upgrade: u, Live: live, Now: t0}), refusal, t0)
	assert.Empty(t, again.Events, "the same refusal is reported once")
}

func reasons(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Reason)
	}
	return out
}

func TestUSMDeployRemoval(t *testing.T) {
	assert.True(t, USMDeploy{From: "13.01.2", To: "13.01.1"}.Removal())
	assert.False(t, USMDeploy{From: "13.01.1", To: "13.01.2"}.Removal())
	assert.False(t, USMDeploy{From: "13.01.2", To: "27.03.0"}.Removal(), "a major upgrade")
	assert.False(t, USMDeploy{From: "27.03.0", To: "13.01.2"}.Removal(), "another major is never removed")
	assert.False(t, USMDeploy{From: "junk", To: "13.01.1"}.Removal())
}
