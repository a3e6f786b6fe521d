package plan

import (
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// Compute plans the steps from current (the running composite release,
// both parts set) to target (spec.release; a zero target Kubernetes keeps
// the running version apart from what a major upgrade needs). The plan
// follows the seed's table:
//
//	patch only                sw-deploy(target)
//	k8s only                  kube-upgrade(target)
//	patch + k8s               sw-deploy(target) → kube-upgrade(target)
//	major upgrade to GA       sw-deploy(highest patch) → kube-upgrade(highest k8s) → sw-deploy(GA) → kube-upgrade(target k8s)
//	major upgrade to a patch  … → sw-deploy(GA) → sw-deploy(target patch) → kube-upgrade(target k8s)
//
// Steps that would change nothing are left out (already on the highest
// patch, Kubernetes already there). "Highest patch" is the highest
// deployable release of the running major; "highest k8s" is the highest
// usable Kubernetes version sysinv lists for the running release that is
// not above the target.
//
// The plan uses only what a real system exposes before a step starts: USM
// releases (no Kubernetes versions in them) and sysinv's kube_versions,
// which list the running release's versions only. What only a later point
// can tell is a step's Check: a new major's Kubernetes versions (the
// deploy precheck reads its feed: the GA step's Check), and versions a
// planned release brings (a kube step after it is checked when it starts).
// The controller plans again on every reconcile, so once such a release
// runs the next plan uses its list.
//
// Duplex systems (every mode but simplex) move Kubernetes one minor version
// per step: Compute expands such a jump into one kube-upgrade per minor
// version, choosing in each intermediate minor the highest usable version
// sysinv lists that upgrades from the previous one; it refuses, naming the
// missing minor, when there is none. Simplex (AIO-SX) takes the jump in
// one step.
//
// An empty plan means the system already runs target. Errors say why no
// plan reaches target and what to upload or change.
func Compute(current, target release.Composite, cat release.Catalog, mode SystemMode) ([]DeployStep, error) {
	if err := checkEnds(current, target); err != nil {
		return nil, err
	}
	if !target.Platform.Equal(current.Platform) {
		if _, err := deployable(target.Platform, cat); err != nil {
			return nil, err
		}
	}
	p := &planner{cat: cat, mode: mode, state: current}
	var err error
	if target.Platform.SameMajor(current.Platform) {
		err = p.withinMajor(target)
	} else {
		err = p.major(target)
	}
	if err != nil {
		return nil, err
	}
	return p.steps, nil
}

// checkEnds refuses unknown current releases and downgrades.
func checkEnds(current, target release.Composite) error {
	if current.Platform.IsZero() || current.Kubernetes.IsZero() {
		return fmt.Errorf("the running release '%s' is not known in full (want '<product> / <k8s>'); wait for the controller to observe the system", current)
	}
	if target.Platform.IsZero() {
		return fmt.Errorf("no target product release; set spec.release.platform")
	}
	if target.Platform.Compare(current.Platform) < 0 {
		return fmt.Errorf("product release '%s' is older than the running '%s'; a plan only moves forward: choose '%s' or newer (USM removes patches of the running major only when an older release is deployed on the system, a patch removal that cannot be aborted: sw-manager sw-deploy-strategy create '%s')",
			target.Platform, current.Platform, current.Platform, target.Platform)
	}
	if !target.Kubernetes.IsZero() && target.Kubernetes.Compare(current.Kubernetes) < 0 {
		return fmt.Errorf("kubernetes %s is older than the running %s; a plan only moves forward: choose %s or newer", target.Kubernetes, current.Kubernetes, current.Kubernetes)
	}
	return nil
}

// planner accumulates allowed steps from state.
type planner struct {
	cat   release.Catalog
	mode  SystemMode
	state release.Composite
	steps []DeployStep
}

// add appends step if it is allowed from the current state and advances it.
func (p *planner) add(step DeployStep) error {
	if err := Allowed(p.state, step, p.cat, p.mode); err != nil {
		return fmt.Errorf("cannot %s (%s): %w", step, step.Reason, err)
	}
	p.steps = append(p.steps, step)
	p.state = step.Apply(p.state)
	return nil
}

func (p *planner) swDeploy(id release.ID, reason string) error {
	return p.add(DeployStep{Kind: SwDeploy, Release: id, Reason: reason})
}

// withinMajor: patch only, k8s only, or patch + k8s.
func (p *planner) withinMajor(target release.Composite) error {
	if target.Platform.Compare(p.state.Platform) > 0 {
		reason := fmt.Sprintf("patch %s from %s to the target", target.Platform.Major(), p.state.Platform)
		if err := p.swDeploy(target.Platform, reason); err != nil {
			return err
		}
	}
	return p.kubeTo(target.Kubernetes, "target Kubernetes version")
}

// major: highest patch → highest k8s → GA → target patch → target k8s.
func (p *planner) major(target release.Composite) error {
	gaProduct, err := deployable(target.Platform.GA(), p.cat)
	if err != nil {
		return fmt.Errorf("major upgrade to '%s' needs its entry-point release '%s': %w", target.Platform, target.Platform.GA(), err)
	}
	ga := gaProduct.ID // USM's spelling: starlingx-27.03 or starlingx-27.03.0
	if hp := p.cat.HighestPatch(p.state.Platform); hp.Compare(p.state.Platform) > 0 {
		reason := fmt.Sprintf("highest patch of %s, deployed before the major upgrade", hp.Major())
		if err := p.swDeploy(hp, reason); err != nil {
			return err
		}
	}
	bridge := p.bridgeKube(target.Kubernetes)
	reason := fmt.Sprintf("highest Kubernetes sysinv lists for %s, which %s must also run, needed before the major upgrade", p.state.Platform, ga)
	if err := p.kubeTo(bridge, reason); err != nil {
		return err
	}
	gaStep := DeployStep{Kind: SwDeploy, Release: ga, Reason: fmt.Sprintf("entry point of major release %s", ga.Major()),
		Check: MajorCheck(ga, p.state.Kubernetes)}
	if err := p.add(gaStep); err != nil {
		return err
	}
	if target.Platform.Compare(ga) > 0 {
		reason := fmt.Sprintf("patch %s from its GA to the target", ga.Major())
		if err := p.swDeploy(target.Platform, reason); err != nil {
			return err
		}
	}
	return p.kubeTo(target.Kubernetes, "target Kubernetes version")
}
