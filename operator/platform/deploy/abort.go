package deploy

import (
	"fmt"
	"strings"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
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

// abort reverts the running step to deployFromRelease with the mechanisms
// the real system has, one VIM write per reconcile:
//
//  1. the step's strategy is stopped: aborted while applying (the VIM
//     finishes the running step: nfv_common strategy _abort), deleted while
//     building, ready to apply or ended (force while building);
//  2. a USM deploy it left (any state from start-done on) is reverted by a
//     sw-upgrade strategy created with "rollback": true, applied, and
//     deleted once applied: its stages run USM's deploy abort,
//     activate-rollback, host rollback and deploy delete
//     (nfv strategy/_strategy.py SwUpgradeStrategy._build_complete_rollback;
//     starlingx/update software_controller.py software_deploy_abort_api,
//     software_deploy_activate_rollback_api, software_deploy_host_rollback_api,
//     software_deploy_delete_api);
//  3. with the VIM empty and no deploy left, the deployment ends: None
//     when the system runs deployFromRelease again, else Failed naming the
//     point of no return it passed.
//
// A kube-upgrade strategy on a duplex system cannot be aborted (nfv
// KubeUpgradeStrategy.is_abortable: "requiring a backup and restore"), so
// it is left to finish and the abort ends Failed; on a simplex system the
// VIM's abort phase runs sysinv's kube-upgrade-abort, which restores the
// from_version (kube_upgrade.py KubeUpgradeController.patch).
func (d *decider) abort() {
	s := d.live.Strategy
	ad := &d.st.ActiveDeploy
	if s != nil {
		ad.ReleaseDeployingStatus = s.Progress
		if s.Rollback {
			d.rollingBack(s)
			return
		}
		switch s.State {
		case vim.StateApplying:
			if s.Kind == plan.KubeUpgrade && d.duplex() {
				d.phase(PhaseAborting, "AbortNotSupported", "%s cannot be aborted: the VIM refuses to abort a kube-upgrade strategy on a %s system (Kubernetes is rolled back only by backup and restore); waiting for it to end (%s)",
					ad.ReleaseDeploying, d.live.Mode, s.Progress)
				d.act(Action{}, RequeueActive)
				return
			}
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
	if dep := d.live.Deploy; dep != nil {
		d.rollback(dep, "spec.release is back at "+ad.DeployFromRelease)
		return
	}
	ad.TimeDuration = FormatDuration(d.elapsed())
	ad.ReleaseDeploying, ad.ReleaseDeployingStatus = "", ""
	if d.live.Running.String() == ad.DeployFromRelease && d.live.KubeUpgradeInProgress == "" {
		ad.Status, ad.StatusReason = v1alpha1.DeployStatusNone, fmt.Sprintf("aborted; the system still runs %s, with no software deploy or kubernetes upgrade left in progress", ad.DeployFromRelease)
		d.event(true, ReasonDeployAborted, "Deployment to %s aborted; the system still runs %s", ad.DeployToRelease, ad.DeployFromRelease)
		d.idle()
		return
	}
	ad.Status = v1alpha1.DeployStatusFailed
	ad.StatusReason = d.noReturn()
	d.event(true, ReasonDeployAborted, "Deployment to %s %s", ad.DeployToRelease, ad.StatusReason)
	d.phase(PhaseFailed, "Aborted", "%s", ad.StatusReason)
	d.act(Action{}, RequeueIdle)
}

// noReturn says why the system cannot be brought back and what to do.
func (d *decider) noReturn() string {
	ad := d.st.ActiveDeploy
	var why []string
	if d.live.KubeUpgradeInProgress != "" {
		why = append(why, fmt.Sprintf("the kubernetes upgrade %s did not abort: see 'system kube-upgrade-show'", d.live.KubeUpgradeInProgress))
	}
	from, err := release.ParseComposite(ad.DeployFromRelease)
	if err == nil && d.live.Running.Platform.Compare(from.Platform) > 0 {
		why = append(why, fmt.Sprintf("a software deploy that was completed and deleted cannot be aborted (USM's deploy abort needs a deploy record: software_controller.py software_deploy_abort_api), so %s stays deployed", d.live.Running.Platform))
	}
	if err == nil && d.live.Running.Kubernetes.Compare(from.Kubernetes) > 0 {
		why = append(why, fmt.Sprintf("kubernetes is never downgraded (a kube upgrade is aborted only before it completes, and only on simplex systems), so %s stays", d.live.Running.Kubernetes))
	}
	return fmt.Sprintf("aborted after %d of %d step(s); the system runs %s, not %s: %s; set spec.release to %s or newer",
		d.reachedSteps(), len(d.st.DeployPlan.DeploySteps), d.live.Running, ad.DeployFromRelease, strings.Join(why, "; "), d.live.Running)
}

// rollback starts the revert of a USM deploy left on the system: a
// sw-upgrade strategy with "rollback": true (the VIM refuses it while the
// deploy is still starting, so that is waited for).
func (d *decider) rollback(dep *USMDeploy, why string) {
	if dep.Removal() {
		d.phase(PhaseBlocked, "PatchRemoval", "%s, but the software deploy %s → %s (%s) is a patch removal: USM neither aborts it nor deletes it before it completes, and a rollback strategy needs a deploying release; finish it on the system (sw-manager sw-deploy-strategy create starlingx-%s --delete, then apply); waiting for it to end",
			why, dep.From, dep.To, dep.State, dep.To)
		d.act(Action{}, RequeueActive)
		return
	}
	if dep.State == "start" {
		d.phase(d.revertPhase(), "RollingBack", "the software deploy %s → %s is still starting; rolling it back once it has started", dep.From, dep.To)
		d.act(Action{}, RequeueActive)
		return
	}
	d.st.ActiveDeploy.ReleaseDeployingStatus = "rollback " + dep.State
	d.event(true, ReasonDeployRollback, "%s: rolling back the software deploy %s → %s (%s) with a sw-deploy rollback strategy (deploy abort, activate-rollback, host rollback, deploy delete)",
		why, dep.From, dep.To, dep.State)
	d.phase(d.revertPhase(), "RollingBack", "creating a sw-deploy rollback strategy for the software deploy %s → %s (%s)", dep.From, dep.To, dep.State)
	d.act(Action{Kind: ActRollback, Policy: d.u.Spec.DeployPolicy}, RequeueSoon)
}

// rollingBack follows the rollback strategy: applied once built, deleted
// once applied; any other end leaves the deploy where the rollback
// stopped and ends the deployment Failed with what to do.
func (d *decider) rollingBack(s *Strategy) {
	dep := "the software deploy"
	if l := d.live.Deploy; l != nil {
		dep = fmt.Sprintf("the software deploy %s → %s (%s)", l.From, l.To, l.State)
	}
	switch s.State {
	case vim.StateReadyToApply:
		d.phase(d.revertPhase(), "RollingBack", "rolling back %s: applying the rollback strategy", dep)
		d.act(Action{Kind: ActApply, StrategyKind: s.Kind, UUID: s.UUID}, RequeueSoon)
	case vim.StateApplied:
		d.phase(d.revertPhase(), "RollingBack", "%s is rolled back: deleting the rollback strategy", dep)
		d.act(deleteAction(s, false), RequeueSoon)
	case vim.StateInitial, vim.StateBuilding, vim.StateApplying, vim.StateAborting:
		d.phase(d.revertPhase(), "RollingBack", "rolling back %s: the rollback strategy is %s (%s)", dep, s.State, s.Progress)
		d.act(Action{}, RequeueActive)
	default:
		ad := &d.st.ActiveDeploy
		ad.TimeDuration = FormatDuration(d.elapsed())
		prefix := "aborted, but the rollback"
		if !d.abortRequested() {
			prefix = "the rollback"
		}
		why := fmt.Sprintf("%s of %s ended %s (%s); the system runs %s and the rollback strategy is kept for inspection: fix the cause and roll back on the system (sw-manager sw-deploy-strategy create --rollback, then apply), or change spec.release to deploy from where it stands",
			prefix, dep, s.State, reasonOr(s.Reason), d.live.Running)
		d.fail(v1alpha1.DeployStatusFailed, ReasonDeployFailed, why)
		d.phase(PhaseFailed, "RollbackFailed", "%s", why)
		d.act(Action{}, RequeueIdle)
	}
}

// leftover reports a USM deploy the VIM holds no strategy for and that is
// not the deploy of cur (a kube step, or another release): a deploy an
// aborted, failed or deleted strategy left behind. Every later step needs
// it gone (deploy start needs no deploy: software_deploy_start_api; the
// kube-upgrade build refuses while one exists), so the running deployment
// rolls it back first.
func (d *decider) leftover(cur plan.DeployStep) *USMDeploy {
	dep := d.live.Deploy
	if dep == nil {
		return nil
	}
	if cur.Kind == plan.SwDeploy {
		if to, err := release.ParseID("starlingx-" + dep.To); err == nil && to.Equal(cur.Release) && !strings.Contains(dep.State, "rollback") {
			return nil // the step's own deploy: its strategy resumes it
		}
	}
	return dep
}

// revertPhase is Aborting while the user's abort runs, else Deploying (a
// leftover deploy is rolled back before the next step).
func (d *decider) revertPhase() Phase {
	if d.abortRequested() {
		return PhaseAborting
	}
	return PhaseDeploying
}

func (d *decider) duplex() bool {
	return d.live.Mode == v1alpha1.SystemModeDuplex || d.live.Mode == v1alpha1.SystemModeDuplexDirect
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
