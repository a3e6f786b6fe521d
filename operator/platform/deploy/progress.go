package deploy

import (
	"fmt"
	"time"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/dryrun"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
)

// startIfNeeded opens a deployment when none is recorded: the plan is
// taken again from the live system, from/to and the start time are
// recorded, and DeployStarted is emitted.
func (d *decider) startIfNeeded() {
	if d.deploying() {
		return
	}
	d.st.DeployPlan = dryrun.DeployPlan(d.u.Spec, d.st)
	d.st.ActiveDeploy = v1alpha1.ActiveDeploy{
		Status:            v1alpha1.DeployStatusDeploying,
		DeployFromRelease: d.live.Running.String(),
		DeployToRelease:   d.end.String(),
		TimeStart:         d.in.Now.UTC().Format(time.RFC3339),
	}
	d.event(false, ReasonDeployStarted, "Deploying %s from %s in %d step(s): %s",
		d.end, d.live.Running, len(d.remaining), stepList(d.remaining))
}

// label is "step 2/4 kube-upgrade(v1.34.1)": s's number in the deployment
// (a step the live system already reached counts as done).
func (d *decider) label(s plan.DeployStep) string {
	n := d.done() + 1
	if reached(s, d.live.Running) {
		n = d.done()
	}
	return fmt.Sprintf("step %d/%d %s", max(n, 1), d.total(), s)
}

// progressTo makes next the current step in the status (nil: every step is
// done), emitting DeployStepCompleted when the step recorded as deploying
// has been reached by the live system. The build-retry count restarts with
// each step.
func (d *decider) progressTo(next *plan.DeployStep, progress string) {
	if !d.deploying() {
		return
	}
	ad := &d.st.ActiveDeploy
	prev, ok := parseDeploying(ad.ReleaseDeploying)
	moved := next == nil || !ok || !sameStep(prev, *next)
	if ok && moved && reached(prev, d.live.Running) && next != nil {
		d.event(false, ReasonDeployStepCompleted, "Step %d/%d %s completed; %s since the deployment started",
			d.done(), d.total(), prev, FormatDuration(d.elapsed()))
	}
	if moved {
		ad.BuildRetries = 0
	}
	if next == nil {
		ad.ReleaseDeploying, ad.ReleaseDeployingStatus = "", ""
		return
	}
	ad.ReleaseDeploying, ad.ReleaseDeployingStatus, ad.StatusReason = Deploying(*next), progress, ""
}

// complete closes a deployment whose every step the live system runs.
func (d *decider) complete() {
	if !d.deploying() {
		return
	}
	d.progressTo(nil, "")
	ad := &d.st.ActiveDeploy
	ad.TimeDuration = FormatDuration(d.elapsed())
	ad.Status, ad.StatusReason = v1alpha1.DeployStatusNone, ""
	d.event(false, ReasonDeployCompleted, "Deployed %s in %d step(s) (%s), from %s",
		ad.DeployToRelease, d.total(), ad.TimeDuration, ad.DeployFromRelease)
}

// fail ends a deployment with status (Build Failed, Apply Failed, Failed)
// and the reason, emitting reason's event once.
func (d *decider) fail(status v1alpha1.DeployStatus, eventReason, why string) {
	ad := &d.st.ActiveDeploy
	if d.deploying() {
		ad.TimeDuration = FormatDuration(d.elapsed())
	}
	if ad.Status != status || ad.StatusReason != why {
		d.event(true, eventReason, "%s", why)
	}
	ad.Status, ad.StatusReason = status, why
}

// idle reports an idle system: Ready unless a software deploy or a kube
// upgrade is left in progress outside any strategy.
func (d *decider) idle() {
	switch {
	case d.live.DeployInProgress != "":
		d.phase(PhaseBlocked, "DeployInProgress", "the system runs %s, but a software deploy %s is still in progress with no strategy; finish or abort it on the system",
			d.live.Running, d.live.DeployInProgress)
	case d.live.KubeUpgradeInProgress != "":
		d.phase(PhaseBlocked, "KubeUpgradeInProgress", "the system runs %s, but a kubernetes upgrade %s is still in progress with no strategy; finish or abort it on the system",
			d.live.Running, d.live.KubeUpgradeInProgress)
	default:
		d.phase(PhaseIdle, "Deployed", "the system runs %s", d.live.Running)
	}
	d.act(Action{}, RequeueIdle)
}
