package deploy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

func TestNext(t *testing.T) {
	const (
		from = "starlingx-13.01.0 / v1.33.0"
		to   = "starlingx-27.03.0 / v1.35.0"
	)
	major := []string{"starlingx-13.01.2", "k8s-v1.34.1", "starlingx-27.03.0", "k8s-v1.35.0"}
	deployingMajor := func(step string) func(*v1alpha1.UpgradeStatus) { return deployingTo(from, to, step, major...) }
	failed := func(status v1alpha1.DeployStatus, retries int32) func(*v1alpha1.UpgradeStatus) {
		return func(st *v1alpha1.UpgradeStatus) {
			deployingTo(from, "starlingx-13.01.2 / v1.33.0", "starlingx-13.01.2", "starlingx-13.01.2")(st)
			st.ActiveDeploy.Status, st.ActiveDeploy.StatusReason, st.ActiveDeploy.BuildRetries = status, "it failed", retries
		}
	}
	cases := []struct {
		name     string
		u        *v1alpha1.Upgrade
		live     Live
		strategy *Strategy
		retries  int
		// want
		action string
		status v1alpha1.DeployStatus
		phase  Phase
		events string
		check  func(t *testing.T, d Decision)
	}{
		{name: "idle: the system runs spec", u: upgrade(from, 1, 0, nil), live: demoLive(from, "duplex"),
			action: "none", status: "", phase: PhaseIdle},
		{name: "spec change: create the first step and start", u: upgrade(to, 2, 1, nil), live: demoLive(from, "duplex"),
			action: "create sw-deploy(starlingx-13.01.2)", status: "Deploying", phase: PhaseDeploying, events: "DeployStarted",
			check: func(t *testing.T, d Decision) {
				ad := d.Status.ActiveDeploy
				assert.Equal(t, from, ad.DeployFromRelease)
				assert.Equal(t, to, ad.DeployToRelease)
				assert.Equal(t, "starlingx-13.01.2", ad.ReleaseDeploying)
				assert.Equal(t, "00:00", ad.TimeDuration)
				assert.Len(t, d.Status.DeployPlan.DeploySteps, 4)
				assert.Equal(t, int64(2), d.Status.ObservedGeneration)
			}},
		{name: "building: wait", u: upgrade(to, 2, 2, deployingMajor("starlingx-13.01.2")), live: demoLive(from, "duplex"),
			strategy: sw("starlingx-13.01.2", vim.StateBuilding), action: "none", status: "Deploying", phase: PhaseDeploying},
		{name: "ready-to-apply: apply", u: upgrade(to, 2, 2, deployingMajor("starlingx-13.01.2")), live: demoLive(from, "duplex"),
			strategy: sw("starlingx-13.01.2", vim.StateReadyToApply), action: "apply sw-deploy uuid-sw", status: "Deploying", phase: PhaseDeploying},
		{name: "applying: progress and duration in the status", u: upgrade(to, 2, 2, deployingMajor("k8s-v1.34.1")),
			live: demoLive("starlingx-13.01.2 / v1.33.0", "duplex"), strategy: kube("v1.34.1", vim.StateApplying),
			action: "none", status: "Deploying", phase: PhaseDeploying,
			check: func(t *testing.T, d Decision) {
				assert.Equal(t, "apply(69%)/stg:(3/4) kube-upgrade-complete", d.Status.ActiveDeploy.ReleaseDeployingStatus)
				assert.Equal(t, "1:00:00", d.Status.ActiveDeploy.TimeDuration)
				assert.Contains(t, d.Message, "step 2/4 kube-upgrade(v1.34.1)")
			}},
		{name: "a kube-upgrade still building has no target yet: taken as the next step", u: upgrade(to, 2, 2, deployingMajor("k8s-v1.34.1")),
			live: demoLive("starlingx-13.01.2 / v1.33.0", "duplex"), strategy: kube("", vim.StateBuilding),
			action: "none", status: "Deploying", phase: PhaseDeploying},
		{name: "the step's release runs while its strategy finishes: no step event yet", u: upgrade(to, 2, 2, deployingMajor("starlingx-13.01.2")),
			live: demoLive("starlingx-13.01.2 / v1.33.0", "duplex"), strategy: sw("starlingx-13.01.2", vim.StateApplying),
			action: "none", status: "Deploying", phase: PhaseDeploying,
			check: func(t *testing.T, d Decision) {
				assert.Equal(t, "starlingx-13.01.2", d.Status.ActiveDeploy.ReleaseDeploying)
			}},
		{name: "applied: delete it, the step completed, the next one is current", u: upgrade(to, 2, 2, deployingMajor("starlingx-13.01.2")),
			live: demoLive("starlingx-13.01.2 / v1.33.0", "duplex"), strategy: sw("starlingx-13.01.2", vim.StateApplied),
			action: "delete sw-deploy uuid-sw", status: "Deploying", phase: PhaseDeploying, events: "DeployStepCompleted",
			check: func(t *testing.T, d Decision) {
				assert.Equal(t, "k8s-v1.34.1", d.Status.ActiveDeploy.ReleaseDeploying)
				assert.Equal(t, "Step 1/4 sw-deploy(starlingx-13.01.2) completed; 1:00:00 since the deployment started", d.Events[0].Message)
			}},
		{name: "crash after the delete: the step completion is seen from the live system", u: upgrade(to, 2, 2, deployingMajor("starlingx-13.01.2")),
			live:   demoLive("starlingx-13.01.2 / v1.33.0", "duplex"),
			action: "create kube-upgrade(v1.34.1)", status: "Deploying", phase: PhaseDeploying, events: "DeployStepCompleted"},
		{name: "last step applied: delete it and complete", u: upgrade(to, 2, 2, deployingMajor("k8s-v1.35.0")),
			live: demoLive(to, "duplex"), strategy: kube("v1.35.0", vim.StateApplied),
			action: "delete kube-upgrade uuid-kube", status: "None", phase: PhaseIdle, events: "DeployCompleted",
			check: func(t *testing.T, d Decision) { assert.Equal(t, "", d.Status.ActiveDeploy.ReleaseDeploying) }},
		{name: "duplex major from controller-1: swact first", u: upgrade(to, 2, 2, deployingMajor("k8s-v1.34.1")),
			live: func() Live {
				l := demoLive("starlingx-13.01.2 / v1.34.1", "duplex")
				l.ActiveController = "controller-1"
				return l
			}(),
			action: "swact controller-1", status: "Deploying", phase: PhaseDeploying, events: "DeployStepCompleted, SwactInitiated"},
		{name: "simplex major: no swact", u: upgrade(to, 2, 2, deployingMajor("k8s-v1.34.1")),
			live:   demoLive("starlingx-13.01.2 / v1.34.1", "simplex"),
			action: "create sw-deploy(starlingx-27.03.0)", status: "Deploying", phase: PhaseDeploying, events: "DeployStepCompleted"},
		{name: "build failed: delete to retry, with an event", u: upgrade(to, 2, 2, deployingMajor("starlingx-13.01.2")),
			live: demoLive(from, "duplex"), strategy: sw("starlingx-13.01.2", vim.StateBuildFailed),
			action: "delete sw-deploy uuid-sw", status: "Deploying", phase: PhaseDeploying, events: "DeployBuildRetry",
			check: func(t *testing.T, d Decision) { assert.Equal(t, int32(1), d.Status.ActiveDeploy.BuildRetries) }},
		{name: "build failed beyond the retries: Build Failed, the strategy kept", retries: 2,
			u: upgrade(to, 2, 2, func(st *v1alpha1.UpgradeStatus) {
				deployingMajor("starlingx-13.01.2")(st)
				st.ActiveDeploy.BuildRetries = 2
			}),
			live: demoLive(from, "duplex"), strategy: sw("starlingx-13.01.2", vim.StateBuildTimeout),
			action: "none", status: "Build Failed", phase: PhaseBuildFailed, events: "DeployBuildFailed"},
		{name: "Build Failed stands while the spec does not change", u: upgrade("starlingx-13.01.2 / v1.33.0", 2, 2, failed("Build Failed", 3)),
			live: demoLive(from, "duplex"), strategy: sw("starlingx-13.01.2", vim.StateBuildFailed),
			action: "none", status: "Build Failed", phase: PhaseBuildFailed},
		{name: "apply failed: Apply Failed, the strategy kept", u: upgrade(to, 2, 2, deployingMajor("starlingx-13.01.2")),
			live: demoLive(from, "duplex"), strategy: sw("starlingx-13.01.2", vim.StateApplyFailed),
			action: "none", status: "Apply Failed", phase: PhaseApplyFailed, events: "DeployApplyFailed"},
		{name: "apply failed, the VIM's own abort phase runs: wait for it (no delete while aborting)", u: upgrade(to, 2, 2, deployingMajor("starlingx-13.01.2")),
			live: demoLive(from, "duplex"), strategy: applyFailedThen(vim.StateAborting),
			action: "none", status: "Deploying", phase: PhaseDeploying,
			check: func(t *testing.T, d Decision) {
				assert.Contains(t, d.Message, "the sw-deploy strategy's apply failed (deploy host failed); the VIM is running its abort phase")
			}},
		{name: "apply failed, then aborted by the VIM: Apply Failed, not an abort", u: upgrade(to, 2, 2, deployingMajor("starlingx-13.01.2")),
			live: demoLive(from, "duplex"), strategy: applyFailedThen(vim.StateAborted),
			action: "none", status: "Apply Failed", phase: PhaseApplyFailed, events: "DeployApplyFailed",
			check: func(t *testing.T, d Decision) {
				assert.Contains(t, d.Status.ActiveDeploy.StatusReason, "the sw-deploy strategy is apply-failed (deploy host failed), then aborted by the VIM's own abort phase")
			}},
		{name: "apply failed, the VIM's abort phase failed: Apply Failed", u: upgrade(to, 2, 2, deployingMajor("starlingx-13.01.2")),
			live: demoLive(from, "duplex"), strategy: applyFailedThen(vim.StateAbortFailed),
			action: "none", status: "Apply Failed", phase: PhaseApplyFailed, events: "DeployApplyFailed",
			check: func(t *testing.T, d Decision) {
				assert.Contains(t, d.Status.ActiveDeploy.StatusReason, "apply-failed (deploy host failed), then abort-failed by the VIM's own abort phase")
			}},
		{name: "apply failed and the spec changed: delete and start again", u: upgrade("starlingx-13.01.2 / v1.33.0", 3, 2, failed("Apply Failed", 0)),
			live: demoLive(from, "duplex"), strategy: sw("starlingx-13.01.2", vim.StateApplyFailed),
			action: "delete sw-deploy uuid-sw", status: "Deploying", phase: PhaseDeploying, events: "DeployStarted"},
		{name: "a failed strategy of another target after a spec change: delete and start", u: upgrade("starlingx-13.01.1 / v1.33.0", 3, 2, failed("Apply Failed", 0)),
			live: demoLive(from, "duplex"), strategy: sw("starlingx-13.01.2", vim.StateApplyFailed),
			action: "delete sw-deploy uuid-sw", status: "Deploying", phase: PhaseDeploying, events: "DeployStarted"},
		{name: "a failure stands without a strategy too", u: upgrade("starlingx-13.01.2 / v1.33.0", 2, 2, failed("Apply Failed", 0)),
			live: demoLive(from, "duplex"), action: "none", status: "Apply Failed", phase: PhaseApplyFailed},
		{name: "another running strategy blocks", u: upgrade("starlingx-13.01.1 / v1.33.0", 2, 1, nil),
			live: demoLive(from, "duplex"), strategy: kube("v1.34.1", vim.StateApplying),
			action: "none", status: "", phase: PhaseBlocked},
		{name: "another ended strategy is deleted when the plan needs the VIM", u: upgrade("starlingx-13.01.1 / v1.33.0", 2, 1, nil),
			live: demoLive(from, "duplex"), strategy: kube("v1.34.1", vim.StateAborted),
			action: "delete kube-upgrade uuid-kube", status: "", phase: PhaseDeploying},
		{name: "abort while applying", u: upgrade(from, 3, 2, deployingMajor("starlingx-13.01.2")),
			live: demoLive(from, "duplex"), strategy: sw("starlingx-13.01.2", vim.StateApplying),
			action: "abort sw-deploy uuid-sw", status: "Deploying", phase: PhaseAborting, events: "DeployAbortRequested"},
		{name: "abort while building: force delete", u: upgrade(from, 3, 2, deployingMajor("starlingx-13.01.2")),
			live: demoLive(from, "duplex"), strategy: sw("starlingx-13.01.2", vim.StateBuilding),
			action: "delete sw-deploy uuid-sw", status: "Deploying", phase: PhaseAborting,
			check: func(t *testing.T, d Decision) { assert.True(t, d.Action.Force) }},
		{name: "aborted: delete", u: upgrade(from, 3, 3, deployingMajor("starlingx-13.01.2")),
			live: demoLive(from, "duplex"), strategy: sw("starlingx-13.01.2", vim.StateAborted),
			action: "delete sw-deploy uuid-sw", status: "Deploying", phase: PhaseAborting},
		{name: "abort done, nothing had changed: None", u: upgrade(from, 3, 3, deployingMajor("starlingx-13.01.2")),
			live: demoLive(from, "duplex"), action: "none", status: "None", phase: PhaseIdle, events: "DeployAborted"},
		{name: "abort done after a step: Failed, steps stay", u: upgrade(from, 3, 3, deployingMajor("k8s-v1.34.1")),
			live: demoLive("starlingx-13.01.2 / v1.33.0", "duplex"), action: "none", status: "Failed", phase: PhaseFailed, events: "DeployAborted",
			check: func(t *testing.T, d Decision) {
				assert.Contains(t, d.Status.ActiveDeploy.StatusReason, "aborted after 1 of 4 step(s)")
			}},
		{name: "dry run: nothing is created", u: func() *v1alpha1.Upgrade {
			u := upgrade(to, 2, 1, nil)
			u.Spec.DeployPolicy.DryRun = true
			return u
		}(), live: demoLive(from, "duplex"), action: "none", status: "", phase: PhaseDryRun,
			check: func(t *testing.T, d Decision) {
				assert.True(t, d.Status.DeployPlan.DryRun)
				assert.Equal(t, "OK", d.Status.DeployPlan.ValidationResult)
				assert.Len(t, d.Status.DeployPlan.DeploySteps, 4)
			}},
		{name: "dry run holds a ready strategy", u: func() *v1alpha1.Upgrade {
			u := upgrade(to, 3, 2, deployingMajor("starlingx-13.01.2"))
			u.Spec.DeployPolicy.DryRun = true
			return u
		}(), live: demoLive(from, "duplex"), strategy: sw("starlingx-13.01.2", vim.StateReadyToApply),
			action: "none", status: "Deploying", phase: PhaseDryRun},
		{name: "targetDeployStep pre-upgrade-deploy stops before the major", u: func() *v1alpha1.Upgrade {
			u := upgrade(to, 2, 2, deployingMajor("k8s-v1.34.1"))
			u.Spec.TargetDeployStep = v1alpha1.TargetDeployStepPreUpgradeDeploy
			return u
		}(), live: demoLive("starlingx-13.01.2 / v1.34.1", "simplex"),
			action: "none", status: "None", phase: PhaseStopped, events: "DeployStepCompleted, DeployStopped"},
		{name: "no plan: Failed with the planner's reason", u: upgrade("starlingx-13.01.0 / v1.32.2", 2, 1, nil),
			live: demoLive(from, "duplex"), action: "none", status: "Failed", phase: PhaseInvalid,
			check: func(t *testing.T, d Decision) {
				assert.Contains(t, d.Status.ActiveDeploy.StatusReason, "a plan only moves forward")
				assert.Contains(t, d.Status.DeployPlan.ValidationResult, "a plan only moves forward")
			}},
		{name: "a deploy left in progress outside a strategy: not Ready", u: upgrade(from, 1, 1, nil),
			live: func() Live {
				l := demoLive(from, "duplex")
				l.DeployInProgress = "13.01.0 → 13.01.2 (host-done)"
				return l
			}(),
			action: "none", status: "", phase: PhaseBlocked},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			live := tc.live
			live.Strategy = tc.strategy
			d := Next(Input{Upgrade: tc.u, Live: live, Now: t0, MaxBuildRetries: tc.retries})
			assert.Equal(t, tc.action, d.Action.String(), "action")
			assert.Equal(t, tc.status, d.Status.ActiveDeploy.Status, "status.activeDeploy.status (%s)", d.Status.ActiveDeploy.StatusReason)
			assert.Equal(t, tc.phase, d.Phase, "phase: %s", d.Message)
			var reasons []string
			for _, e := range d.Events {
				reasons = append(reasons, e.Reason)
			}
			assert.Equal(t, tc.events, strings.Join(reasons, ", "), "events")
			assert.Len(t, d.Status.Conditions, 4, "Ready, Progressing, Reconciling, Stalled")
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}
}

// TestNextIsPure: the same input gives the same decision, and the input
// is not modified.
func TestNextIsPure(t *testing.T) {
	u := upgrade("starlingx-27.03.0 / v1.35.0", 2, 1, nil)
	live := demoLive("starlingx-13.01.0 / v1.33.0", "duplex")
	before := u.DeepCopy()
	a := Next(Input{Upgrade: u, Live: live, Now: t0})
	b := Next(Input{Upgrade: u, Live: live, Now: t0})
	assert.Equal(t, a, b)
	assert.Equal(t, before, u)
}
