package deploy

import (
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
)

// Controller0 is the controller a duplex system must run active before a
// major release is deployed (USM's precheck).
const Controller0 = "controller-0"

// withoutStrategy decides when the VIM holds no strategy: the next step of
// the plan from the live system is created (after a swact to controller-0
// before a duplex major step), unless the plan is done, invalid, a dry
// run, stopped at spec.targetDeployStep or a failure stands.
func (d *decider) withoutStrategy() {
	if d.planErr != nil {
		d.invalid()
		return
	}
	cur, hasWork := d.first()
	switch {
	case !hasWork && d.deploying() && d.live.Deploy != nil:
		d.rollback(d.live.Deploy, "the deployment ends on the running release")
	case !hasWork:
		d.complete()
		if d.failedStatus() && d.specChanged {
			d.st.ActiveDeploy.Status, d.st.ActiveDeploy.StatusReason = v1alpha1.DeployStatusNone, ""
		}
		d.idle()
	case d.failedStatus() && !d.specChanged:
		d.keepFailure()
	case d.dryRun():
		d.progressTo(&cur, "")
		d.phase(PhaseDryRun, "DryRun", "dry run: %d step(s) to %s, next %s; nothing is executed while spec.deployPolicy.dryRun is true",
			len(d.remaining), d.end, cur)
		d.act(Action{}, RequeueIdle)
	case d.stopsBefore(cur):
		d.stop(cur)
	case d.leftover(cur) != nil:
		d.startIfNeeded()
		d.progressTo(&cur, "")
		d.rollback(d.leftover(cur), fmt.Sprintf("%s needs the system free of software deploys", d.label(cur)))
	case d.needsSwact(cur):
		d.startIfNeeded()
		d.progressTo(&cur, fmt.Sprintf("swact %s → %s", d.live.ActiveController, Controller0))
		d.event(false, ReasonSwactInitiated, "Swact from %s to %s before the major upgrade %s", d.live.ActiveController, Controller0, d.label(cur))
		d.phase(PhaseDeploying, "Swacting", "%s: swacting %s to %s first", d.label(cur), d.live.ActiveController, Controller0)
		d.act(Action{Kind: ActSwact, Host: d.live.ActiveController}, RequeueSoon)
	default:
		d.startIfNeeded()
		d.progressTo(&cur, "")
		d.phase(PhaseDeploying, "Creating", "%s: creating the %s strategy", d.label(cur), cur.Kind)
		d.act(Action{Kind: ActCreate, Step: cur, Policy: d.u.Spec.DeployPolicy}, RequeueSoon)
	}
}

// stopsBefore reports whether spec.targetDeployStep ends the deployment
// before cur: with pre-upgrade-deploy, the steps that prepare a major
// upgrade (highest patch, bridge Kubernetes version) run and the major
// release's entry-point sw-deploy does not.
func (d *decider) stopsBefore(cur plan.DeployStep) bool {
	return d.u.Spec.TargetDeployStep == v1alpha1.TargetDeployStepPreUpgradeDeploy && isMajor(cur, d.live.Running)
}

// stop ends (or does not start) a deployment at spec.targetDeployStep.
func (d *decider) stop(cur plan.DeployStep) {
	why := fmt.Sprintf("stopped before %s: spec.targetDeployStep is %s; set it to None to continue to %s",
		cur, d.u.Spec.TargetDeployStep, d.end)
	if d.deploying() {
		d.progressTo(&cur, "") // the step before the stop completed
		ad := &d.st.ActiveDeploy
		ad.ReleaseDeploying, ad.ReleaseDeployingStatus = "", ""
		ad.TimeDuration = FormatDuration(d.elapsed())
		ad.Status, ad.StatusReason = v1alpha1.DeployStatusNone, why
		d.event(false, ReasonDeployStopped, "%s", why)
	}
	d.phase(PhaseStopped, "TargetDeployStepReached", "%s", why)
	d.act(Action{}, RequeueIdle)
}

// needsSwact: a duplex system deploys a major release from controller-0.
func (d *decider) needsSwact(cur plan.DeployStep) bool {
	mode := d.live.Mode
	duplex := mode == v1alpha1.SystemModeDuplex || mode == v1alpha1.SystemModeDuplexDirect
	return duplex && isMajor(cur, d.live.Running) && d.live.ActiveController != "" && d.live.ActiveController != Controller0
}

// invalid: no plan reaches spec.release from the live system.
func (d *decider) invalid() {
	why := fmt.Sprintf("no plan reaches %s from the running %s: %v", specString(d.u.Spec), d.live.Running, d.planErr)
	if d.deploying() {
		d.fail(v1alpha1.DeployStatusFailed, ReasonDeployFailed, why)
	} else {
		ad := &d.st.ActiveDeploy
		ad.Status, ad.StatusReason = v1alpha1.DeployStatusFailed, why
		ad.DeployFromRelease, ad.DeployToRelease = d.live.Running.String(), specString(d.u.Spec)
		ad.ReleaseDeploying, ad.ReleaseDeployingStatus, ad.TimeStart, ad.TimeDuration = "", "", "", ""
	}
	d.phase(PhaseInvalid, "NoPlan", "%s", why)
	d.act(Action{}, RequeueIdle)
}

func specString(s v1alpha1.UpgradeSpec) string {
	if s.Release.Kubernetes == "" {
		return s.Release.Platform
	}
	return s.Release.Platform + " / " + s.Release.Kubernetes
}
