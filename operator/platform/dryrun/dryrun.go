// Package dryrun builds status.deployPlan: the plan from the running
// release to spec.release, or why there is none. Pure: the controller
// writes the result (with deployPolicy.dryRun it executes nothing).
package dryrun

import (
	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/observed"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// ValidationOK is status.deployPlan.validationResult for a valid plan.
const ValidationOK = "OK"

// DeployPlan computes status.deployPlan for an Upgrade's spec from what its
// status observed (status.release, the uploaded catalog, status.systemMode):
//   - dryRun copies spec.deployPolicy.dryRun;
//   - fromRelease is status.release;
//   - toRelease is the composite the plan ends at ("<product> / <k8s>"; with
//     no spec.release.kubernetes, the Kubernetes version the plan ends on);
//   - validationResult is "OK", or the reason no plan reaches spec.release
//     (then deploySteps is empty);
//   - deploySteps are the steps in order, each with its type, target and reason.
func DeployPlan(spec v1alpha1.UpgradeSpec, st v1alpha1.UpgradeStatus) v1alpha1.DeployPlan {
	out := v1alpha1.DeployPlan{
		DryRun:      spec.DeployPolicy.DryRun,
		FromRelease: st.Release,
		ToRelease:   spec.Release.Platform,
	}
	if spec.Release.Kubernetes != "" {
		out.ToRelease = spec.Release.Platform + " / " + spec.Release.Kubernetes
	}
	steps, end, err := compute(spec, st)
	if err != nil {
		out.ValidationResult = err.Error()
		return out
	}
	out.ValidationResult = ValidationOK
	out.ToRelease = end.String()
	for _, s := range steps {
		out.DeploySteps = append(out.DeploySteps, v1alpha1.DeployPlanStep{
			Type:   v1alpha1.DeployStepType(s.Kind),
			Target: s.Target(),
			Reason: s.Reason,
			Check:  s.Check,
		})
	}
	return out
}

// compute plans and returns the composite the plan ends at.
func compute(spec v1alpha1.UpgradeSpec, st v1alpha1.UpgradeStatus) ([]plan.DeployStep, release.Composite, error) {
	current, err := observed.Current(st)
	if err != nil {
		return nil, release.Composite{}, err
	}
	target, err := release.ParseSpec(spec.Release.Platform, spec.Release.Kubernetes)
	if err != nil {
		return nil, release.Composite{}, err
	}
	cat, err := observed.Catalog(st)
	if err != nil {
		return nil, release.Composite{}, err
	}
	steps, err := plan.Compute(current, target, cat, observed.Mode(st))
	if err != nil {
		return nil, release.Composite{}, err
	}
	end := current
	for _, s := range steps {
		end = s.Apply(end)
	}
	return steps, end, nil
}
