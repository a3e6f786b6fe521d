package deploy

import (
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/release"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

// abortRequested: a deployment runs and spec.release is back at its
// deployFromRelease (platform and kubernetes), the seed's abort.
func (d *decider) abortRequested() bool {
	if !d.deploying() {
		return false
	}
	from, err := release.ParseComposite(d.st.ActiveDeploy.DeployFromRelease)
	if err != nil {
		return false
	}
	target, err := release.ParseSpec(d.u.Spec.Release.Platform, d.u.Spec.Release.Kubernetes)
	return err == nil && target.Equal(from)
}

// abort stops the running strategy (abort while applying, delete while
// building or once it ended) and, with the VIM empty, ends the deployment:
// None when the system still runs deployFromRelease, Failed when steps had
// completed (a plan only moves forward, so the system stays where it is).
func (d *decider) abort() {
	s := d.live.Strategy
	ad := &d.st.ActiveDeploy
	if s != nil {
		ad.ReleaseDeployingStatus = s.Progress
		switch s.State {
		case vim.StateApplying:
			d.event(true, ReasonAbortRequested, "spec.release is back at %s: aborting the %s strategy of %s (%s)", ad.DeployFromRelease, s.Kind, ad.ReleaseDeploying, s.Progress)
			d.phase(PhaseAborting, "Aborting", "aborting the %s strategy (%s)", s.Kind, s.Progress)
			d.act(Action{Kind: ActAbort, StrategyKind: s.Kind, UUID: s.UUID}, RequeueSoon)
		case vim.StateAborting:
			d.phase(PhaseAborting, "Aborting", "the %s strategy is aborting (%s)", s.Kind, s.Progress)
			d.act(Action{}, RequeueActive)
		default:
			building := s.State == vim.StateBuilding || s.State == vim.StateInitial
			d.phase(PhaseAborting, "Aborting", "deleting the %s strategy (%s)", s.Kind, s.State)
			d.act(deleteAction(s, building), RequeueSoon)
		}
		return
	}
	ad.TimeDuration = FormatDuration(d.elapsed())
	ad.ReleaseDeploying, ad.ReleaseDeployingStatus = "", ""
	if d.live.Running.String() == ad.DeployFromRelease {
		ad.Status, ad.StatusReason = v1alpha1.DeployStatusNone, fmt.Sprintf("aborted; the system still runs %s", ad.DeployFromRelease)
		d.event(true, ReasonDeployAborted, "Deployment to %s aborted; the system still runs %s", ad.DeployToRelease, ad.DeployFromRelease)
		d.idle()
		return
	}
	ad.Status = v1alpha1.DeployStatusFailed
	ad.StatusReason = fmt.Sprintf("aborted after %d of %d step(s); the system runs %s, not %s (steps are not rolled back): set spec.release to %s or newer",
		d.reachedSteps(), len(d.st.DeployPlan.DeploySteps), d.live.Running, ad.DeployFromRelease, d.live.Running)
	d.event(true, ReasonDeployAborted, "Deployment to %s %s", ad.DeployToRelease, ad.StatusReason)
	d.phase(PhaseFailed, "Aborted", "%s", ad.StatusReason)
	d.act(Action{}, RequeueIdle)
}

// reachedSteps counts the steps of status.deployPlan the live system runs.
func (d *decider) reachedSteps() int {
	n := 0
	for _, ps := range d.st.DeployPlan.DeploySteps {
		s, ok := parseDeploying(ps.Target)
		if ps.Type == v1alpha1.DeployStepKubeUpgrade {
			s, ok = parseDeploying(kubePrefix + ps.Target)
		}
		if ok && reached(s, d.live.Running) {
			n++
		}
	}
	return n
}
