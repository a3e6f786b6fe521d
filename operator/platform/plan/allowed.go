package plan

import (
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// Allowed reports whether step may run on a system at state, given what is
// uploaded and the system mode; nil means allowed, an error says why not.
// Compute only emits allowed steps; tests replay plans through it.
func Allowed(state release.Composite, step DeployStep, cat release.Catalog, mode SystemMode) error {
	if step.Kind == KubeUpgrade {
		return kubeAllowed(state, step.Kube, cat, mode)
	}
	if step.Kind == SwDeploy {
		return swDeployAllowed(state, step.Release, cat)
	}
	return fmt.Errorf("step kind %q is neither %s nor %s", step.Kind, SwDeploy, KubeUpgrade)
}

// swDeployAllowed: id uploaded and deployable, newer than the running
// release, a major upgrade enters through the GA release, and its
// requirements are met. Whether a new major runs the active Kubernetes
// version is the deploy precheck's to say (see MajorCheck).
func swDeployAllowed(state release.Composite, id release.ID, cat release.Catalog) error {
	p, err := deployable(id, cat)
	if err != nil {
		return err
	}
	if id.Compare(state.Platform) <= 0 {
		return fmt.Errorf("product release '%s' is not newer than the running '%s'", id, state.Platform)
	}
	if !id.SameMajor(state.Platform) && !id.IsGA() {
		return fmt.Errorf("a major upgrade to %s enters through its GA release '%s', not '%s'", id.Major(), id.GA(), id)
	}
	for _, q := range p.Requires {
		if !requirementMet(q, state.Platform, id, cat) {
			return fmt.Errorf("product release '%s' requires '%s', which is neither deployed nor deployable with it; upload and deploy '%s' first", id, q, q)
		}
	}
	return nil
}

// MajorCheck is the Check of a major release's sw-deploy step: the USM
// deploy precheck (starlingx/update software/scripts/deploy-precheck,
// UpgradeHealthCheck._check_kube_version) refuses the deploy unless the
// active Kubernetes version is one the new release's feed installs under
// /usr/local/kubernetes; nothing USM or sysinv exposes before says which.
func MajorCheck(id release.ID, kube release.KubeVersion) string {
	return fmt.Sprintf("checked at precheck: the USM deploy precheck refuses '%s' unless its feed includes the active Kubernetes %s", id, kube)
}

// deployable finds id in the catalog and checks its state.
func deployable(id release.ID, cat release.Catalog) (release.Product, error) {
	p, ok := cat.Product(id)
	if !ok {
		return p, fmt.Errorf("product release '%s' is not uploaded", id)
	}
	if !p.State.Deployable() {
		return p, fmt.Errorf("product release '%s' is %s; it must be available to deploy", id, p.State)
	}
	return p, nil
}

// requirementMet: q already runs (same major as the running release, not
// newer) or USM deploys it together with id (same major, older, deployable).
func requirementMet(q, running, id release.ID, cat release.Catalog) bool {
	if q.SameMajor(running) && q.Compare(running) <= 0 {
		return true
	}
	if !q.SameMajor(id) || q.Compare(id) >= 0 {
		return false
	}
	p, ok := cat.Product(q)
	return ok && p.State.Deployable()
}

// kubeAllowed: v newer; listed by sysinv for the release that will be
// running and usable, and within one minor version (and upgrade_from) on
// duplex; or, when sysinv cannot list that release's versions yet (a
// planned later patch or major), deferred to when the step starts.
func kubeAllowed(state release.Composite, v release.KubeVersion, cat release.Catalog, mode SystemMode) error {
	if v.Compare(state.Kubernetes) <= 0 {
		return fmt.Errorf("kubernetes %s is not newer than the running %s", v, state.Kubernetes)
	}
	if Deferred(state.Platform, v, cat) {
		return nil
	}
	k, ok := cat.Kube(v)
	if !ok {
		return fmt.Errorf("kubernetes version '%s' is not one of the Kubernetes versions sysinv lists for '%s' (%s)", v, state.Platform, release.JoinKubeVersions(kubeVersions(cat)))
	}
	if !k.State.Usable() {
		return fmt.Errorf("kubernetes version '%s' is unavailable", v)
	}
	if !mode.OneMinorPerStep() {
		return nil
	}
	if !state.Kubernetes.WithinOneMinor(v) {
		return fmt.Errorf("a %s system upgrades Kubernetes one minor version per step; %s to %s is more than one", modeName(mode), state.Kubernetes, v)
	}
	if !k.UpgradableFrom(state.Kubernetes) {
		return fmt.Errorf("kubernetes %s cannot be upgraded to from %s (it upgrades from %s)", v, state.Kubernetes, release.JoinKubeVersions(k.UpgradeFrom))
	}
	return nil
}

func modeName(m SystemMode) string {
	if m == "" {
		return "duplex (mode unknown)"
	}
	return string(m)
}

func kubeVersions(cat release.Catalog) []release.KubeVersion {
	out := make([]release.KubeVersion, len(cat.Kubes))
	for i, k := range cat.Kubes {
		out[i] = k.Version
	}
	return out
}
