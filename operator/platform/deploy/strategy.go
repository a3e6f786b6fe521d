package deploy

import (
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

// withStrategy decides with a strategy on the VIM. It belongs to this
// deployment when it deploys the plan's next step (a kube-upgrade still
// building, whose target the VIM does not show yet, is taken to be the
// next step when that is a kube-upgrade), or a step the live system has
// already reached (its last stages still run, or it is applied).
// Anything else is another strategy: waited for while it runs, deleted
// once it ended when this plan needs the VIM.
func (d *decider) withStrategy() {
	s := d.live.Strategy
	step, known := stepOf(s)
	cur, hasWork := d.first()
	switch {
	case s.Rollback && d.deploying():
		d.rollingBack(s) // the rollback of a deploy left on the system (nostrategy.go)
	case s.Rollback:
		d.other(s, cur, hasWork)
	case known && reached(step, d.live.Running):
		d.finishing(s, step)
	case hasWork && ((known && sameStep(step, cur)) || (!known && s.Kind == cur.Kind)):
		d.ours(s, cur)
	default:
		d.other(s, cur, hasWork)
	}
}

// finishing: the live system already runs what s deploys.
func (d *decider) finishing(s *Strategy, step plan.DeployStep) {
	switch {
	case s.State == vim.StateApplied:
		next, hasNext := d.first()
		if hasNext {
			d.progressTo(&next, "")
			d.phase(PhaseDeploying, "StepCompleted", "%s is running; %s is next", step, d.label(next))
		} else {
			d.complete()
			d.phase(PhaseIdle, "Deployed", "the system runs %s", d.live.Running)
		}
		d.act(deleteAction(s, false), RequeueSoon)
	case s.State.Terminal():
		d.failed(s, step)
	default:
		if !d.deploying() && !d.dryRun() && len(d.remaining) > 0 {
			d.startIfNeeded()
		}
		d.progressTo(&step, s.Progress)
		d.phase(PhaseDeploying, "Deploying", "%s is running; its %s strategy is finishing: %s", step, s.Kind, s.Progress)
		d.act(Action{}, RequeueActive)
	}
}

// ours: s is the strategy of the next step.
func (d *decider) ours(s *Strategy, cur plan.DeployStep) {
	if s.ApplyFailed && s.State == vim.StateAborting {
		// the VIM's own abort phase after the failure; the strategy cannot
		// be deleted without force until it ends (strategy_delete)
		d.startIfNeeded()
		d.progressTo(&cur, s.Progress)
		d.phase(PhaseDeploying, "ApplyFailedAborting", "%s: the %s strategy's apply failed (%s); the VIM is running its abort phase (%s)",
			d.label(cur), s.Kind, reasonOr(s.Reason), s.Progress)
		d.act(Action{}, RequeueActive)
		return
	}
	switch s.State {
	case vim.StateBuildFailed, vim.StateBuildTimeout:
		d.buildFailed(s, cur)
		return
	case vim.StateApplied, vim.StateApplyFailed, vim.StateApplyTimeout, vim.StateAborted, vim.StateAbortFailed, vim.StateAbortTimeout:
		d.failed(s, cur)
		return
	}
	if !d.deploying() && d.dryRun() {
		d.phase(PhaseDryRun, "DryRun", "dry run: a %s strategy for %s is %s; nothing is applied while spec.deployPolicy.dryRun is true", s.Kind, cur, s.State)
		d.act(Action{}, RequeueActive)
		return
	}
	d.startIfNeeded()
	d.progressTo(&cur, s.Progress)
	lbl := d.label(cur)
	switch {
	case s.State == vim.StateReadyToApply && d.dryRun():
		d.phase(PhaseDryRun, "DryRun", "%s: the strategy is ready to apply; not applied while spec.deployPolicy.dryRun is true", lbl)
		d.act(Action{}, RequeueActive)
	case s.State == vim.StateReadyToApply:
		d.phase(PhaseDeploying, "Applying", "%s: applying the %s strategy", lbl, s.Kind)
		d.act(Action{Kind: ActApply, StrategyKind: s.Kind, UUID: s.UUID}, RequeueSoon)
	default:
		d.phase(PhaseDeploying, "Deploying", "%s: %s %s", lbl, s.State, s.Progress)
		d.act(Action{}, RequeueActive)
	}
}

// buildFailed retries a failed build by deleting the strategy (the next
// reconcile creates it again), at most MaxBuildRetries times per step, each
// with an event; then the deployment is Build Failed until spec changes.
func (d *decider) buildFailed(s *Strategy, cur plan.DeployStep) {
	limit := d.in.MaxBuildRetries
	if limit <= 0 {
		limit = DefaultMaxBuildRetries
	}
	if d.failedStatus() {
		d.afterFailure(s, cur)
		return
	}
	d.startIfNeeded()
	d.progressTo(&cur, s.Progress)
	ad := &d.st.ActiveDeploy
	lbl := d.label(cur)
	if int(ad.BuildRetries) < limit {
		ad.BuildRetries++
		d.event(true, ReasonBuildRetry, "%s: the %s strategy build ended %s (%s); deleting it and creating it again (retry %d of %d)",
			lbl, s.Kind, s.State, reasonOr(s.Reason), ad.BuildRetries, limit)
		d.phase(PhaseDeploying, "BuildRetry", "%s: build %s (%s); retry %d of %d", lbl, s.State, reasonOr(s.Reason), ad.BuildRetries, limit)
		d.act(deleteAction(s, false), RequeueSoon)
		return
	}
	why := fmt.Sprintf("%s: the %s strategy build ended %s %d times, last: %s; fix the cause and change spec to try again",
		lbl, s.Kind, s.State, limit+1, reasonOr(s.Reason))
	d.fail(v1alpha1.DeployStatusBuildFailed, ReasonBuildFailed, why)
	d.phase(PhaseBuildFailed, "BuildFailed", "%s", why)
	d.act(Action{}, RequeueIdle)
}

// failed records an apply that did not succeed (or a strategy aborted
// outside the operator); the strategy is kept for inspection until the
// spec changes.
func (d *decider) failed(s *Strategy, step plan.DeployStep) {
	if d.failedStatus() {
		d.afterFailure(s, step)
		return
	}
	if !d.deploying() {
		d.startIfNeeded()
	}
	d.progressTo(&step, s.Progress)
	status, reason, phase := v1alpha1.DeployStatusApplyFailed, ReasonApplyFailed, PhaseApplyFailed
	if !s.ApplyFailed && (s.State == vim.StateAborted || s.State == vim.StateApplied) {
		status, reason, phase = v1alpha1.DeployStatusFailed, ReasonDeployFailed, PhaseFailed
	}
	state, then := string(s.State), ""
	if s.ApplyFailed && s.State != vim.StateApplyFailed && s.State != vim.StateApplyTimeout {
		// nfv_common Strategy.phase_complete: the VIM aborts a strategy
		// whose apply failed; the state then names that abort's end
		state = string(vim.StateApplyFailed)
		if s.ApplyTimedOut {
			state = string(vim.StateApplyTimeout)
		}
		then = fmt.Sprintf(", then %s by the VIM's own abort phase", s.State)
	}
	why := fmt.Sprintf("%s: the %s strategy is %s (%s)%s; the strategy is kept for inspection: fix the cause and change spec to try again",
		d.label(step), s.Kind, state, reasonOr(s.Reason), then)
	d.fail(status, reason, why)
	d.phase(phase, string(phase), "%s", why)
	d.act(Action{}, RequeueIdle)
}

// afterFailure: a failed deployment's strategy is deleted once the spec
// changed (the next reconcile starts again from the live system), else
// the failure stands.
func (d *decider) afterFailure(s *Strategy, step plan.DeployStep) {
	if d.specChanged {
		d.restart()
		d.phase(PhaseDeploying, "SpecChanged", "spec changed after the failure of %s: deleting the %s strategy (%s) to start again", step, s.Kind, s.State)
		d.act(deleteAction(s, false), RequeueSoon)
		return
	}
	d.keepFailure()
}

// restart ends a failed deployment after a spec change and, when the plan
// from the live system has work and no dry run holds it, starts a new one
// (its strategy is created once the VIM is free).
func (d *decider) restart() {
	if !d.failedStatus() || !d.specChanged {
		return
	}
	ad := &d.st.ActiveDeploy
	ad.Status, ad.StatusReason = v1alpha1.DeployStatusNone, "spec changed after the failure"
	switch cur, ok := d.first(); {
	case ok && !d.dryRun() && !d.stopsBefore(cur):
		d.startIfNeeded()
		d.progressTo(&cur, "")
	case !ok && !d.dryRun() && d.live.Deploy != nil:
		// Nothing to deploy, but the failed step left a software deploy:
		// a deployment from the running release to itself, which the
		// abort path reverts (abort.go rollback) and ends None.
		d.startIfNeeded()
	}
}

// keepFailure reports the recorded failure again.
func (d *decider) keepFailure() {
	ad := d.st.ActiveDeploy
	p := PhaseFailed
	switch ad.Status {
	case v1alpha1.DeployStatusBuildFailed:
		p = PhaseBuildFailed
	case v1alpha1.DeployStatusApplyFailed:
		p = PhaseApplyFailed
	}
	d.phase(p, string(p), "%s", ad.StatusReason)
	d.act(Action{}, RequeueIdle)
}

// other: a strategy that is not this deployment's.
func (d *decider) other(s *Strategy, cur plan.DeployStep, hasWork bool) {
	switch {
	case !s.State.Terminal():
		d.phase(PhaseBlocked, "OtherStrategy", "the VIM holds a %s strategy for %s (%s, %s) that is not this plan's next step%s; waiting for it to end",
			s.Kind, targetOr(s.Target), s.State, s.Progress, nextStep(cur, hasWork))
		d.act(Action{}, RequeueActive)
	case hasWork && !d.dryRun() && !d.stopsBefore(cur) && (!d.failedStatus() || d.specChanged):
		d.restart()
		d.phase(PhaseDeploying, "DeletingOtherStrategy", "deleting the ended %s strategy for %s (%s) to make room for %s", s.Kind, targetOr(s.Target), s.State, cur)
		d.act(deleteAction(s, false), RequeueSoon)
	case d.failedStatus() && d.specChanged && !d.dryRun():
		// Nothing left to deploy after the failure (spec went back): the
		// ended strategy is deleted; a deploy it left is rolled back next.
		d.restart()
		d.phase(PhaseDeploying, "SpecChanged", "spec changed after the failure: deleting the ended %s strategy for %s (%s)", s.Kind, targetOr(s.Target), s.State)
		d.act(deleteAction(s, false), RequeueSoon)
	case d.failedStatus():
		d.keepFailure()
	default:
		d.withoutStrategy()
	}
}

func deleteAction(s *Strategy, force bool) Action {
	return Action{Kind: ActDelete, StrategyKind: s.Kind, UUID: s.UUID, Force: force}
}

func reasonOr(r string) string {
	if r == "" {
		return "no reason given"
	}
	return r
}

func targetOr(t string) string {
	if t == "" {
		return "an unknown target"
	}
	return t
}

func nextStep(cur plan.DeployStep, ok bool) string {
	if !ok {
		return ""
	}
	return " " + cur.String()
}
