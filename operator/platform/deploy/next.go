package deploy

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/kstatus"
	"github.com/lunadas/upgrade-operator/operator/platform/dryrun"
	"github.com/lunadas/upgrade-operator/operator/platform/observed"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// decider holds one call of Next.
type decider struct {
	in          Input
	u           *v1alpha1.Upgrade
	live        Live
	st          v1alpha1.UpgradeStatus // the status being built
	specChanged bool                   // generation != status.observedGeneration
	remaining   []plan.DeployStep      // plan from the live system to spec.release
	end         release.Composite      // where the plan ends
	planErr     error
	out         Decision
}

// Next decides one reconcile of the `system` Upgrade; see the package doc.
func Next(in Input) Decision {
	d := &decider{in: in, u: in.Upgrade, live: in.Live}
	d.st = *in.Upgrade.Status.DeepCopy()
	d.specChanged = in.Upgrade.Generation != in.Upgrade.Status.ObservedGeneration
	d.observe()
	d.planFromLive()
	switch {
	case d.abortRequested():
		d.abort()
	case d.live.Strategy != nil:
		d.withStrategy()
	default:
		d.withoutStrategy()
	}
	d.finish()
	return d.out
}

// observe copies the live system into the status.
func (d *decider) observe() {
	d.st.Release = d.live.Running.String()
	d.st.SystemMode = d.live.Mode
	d.st.UploadedProductReleases = d.live.Products
	d.st.UploadedK8sVersions = d.live.Kubes
}

// planFromLive plans from the running release to spec.release, and
// refreshes status.deployPlan on a spec change outside a deployment.
func (d *decider) planFromLive() {
	spec := d.u.Spec
	target, err := release.ParseSpec(spec.Release.Platform, spec.Release.Kubernetes)
	if err != nil {
		d.planErr = fmt.Errorf("spec.release: %w", err)
	} else if cat, err := observed.Catalog(d.st); err != nil {
		d.planErr = err
	} else {
		d.remaining, d.planErr = plan.Compute(d.live.Running, target, cat, plan.SystemMode(d.live.Mode))
	}
	d.end = d.live.Running
	for _, s := range d.remaining {
		d.end = s.Apply(d.end)
	}
	switch {
	case d.deploying() && d.specChanged:
		d.st.DeployPlan.DryRun = spec.DeployPolicy.DryRun
	case !d.deploying() && (d.specChanged || d.st.DeployPlan.ValidationResult == ""):
		d.st.DeployPlan = dryrun.DeployPlan(spec, d.st)
	}
}

// first is the next step of the plan.
func (d *decider) first() (plan.DeployStep, bool) {
	if len(d.remaining) == 0 {
		return plan.DeployStep{}, false
	}
	return d.remaining[0], true
}

func (d *decider) deploying() bool {
	return d.st.ActiveDeploy.Status == v1alpha1.DeployStatusDeploying
}

func (d *decider) failedStatus() bool {
	switch d.st.ActiveDeploy.Status {
	case v1alpha1.DeployStatusBuildFailed, v1alpha1.DeployStatusApplyFailed, v1alpha1.DeployStatusFailed:
		return true
	}
	return false
}

func (d *decider) dryRun() bool { return d.u.Spec.DeployPolicy.DryRun }

// total is the number of steps of the deployment (status.deployPlan, at
// least what remains).
func (d *decider) total() int {
	return max(len(d.st.DeployPlan.DeploySteps), len(d.remaining))
}

// done is how many steps of the deployment the live system has reached.
func (d *decider) done() int { return d.total() - len(d.remaining) }

// elapsed is the time since the deployment started.
func (d *decider) elapsed() time.Duration {
	t, err := time.Parse(time.RFC3339, d.st.ActiveDeploy.TimeStart)
	if err != nil {
		return 0
	}
	return d.in.Now.Sub(t)
}

func (d *decider) act(a Action, rq Requeue) {
	d.out.Action, d.out.Requeue = a, rq
}

func (d *decider) phase(p Phase, reason, format string, args ...any) {
	d.out.Phase, d.out.Reason, d.out.Message = p, reason, fmt.Sprintf(format, args...)
}

func (d *decider) event(warning bool, reason, format string, args ...any) {
	d.out.Events = append(d.out.Events, Event{Warning: warning, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// finish stamps the duration, the observed generation and the conditions.
func (d *decider) finish() {
	if d.deploying() {
		d.st.ActiveDeploy.TimeDuration = FormatDuration(d.elapsed())
	}
	d.st.ObservedGeneration = d.u.Generation
	now := d.in.Now
	SetReadyCondition(&d.st, d.out.Phase, d.out.Reason, d.out.Message, d.u.Generation, now)
	SetProgressingCondition(&d.st, d.out.Phase, d.out.Reason, d.out.Message, d.u.Generation, now)
	kstatus.SetReconciling(&d.st.Conditions)
	SetStalledCondition(&d.st, d.out.Phase, d.out.Reason, d.out.Message, d.u.Generation, now)
	if SetReleasesSkippedCondition(&d.st, d.live.Skipped, d.u.Generation, now) {
		d.event(true, "ReleasesSkipped", "%s", meta.FindStatusCondition(d.st.Conditions, v1alpha1.ConditionReleasesSkipped).Message)
	}
	d.out.Status = d.st
}
