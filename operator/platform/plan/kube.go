package plan

import (
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// bridgeKube is the Kubernetes version to run before a major upgrade: the
// highest usable version the running release supports that the new
// major's GA also supports, not below the running one and not above
// ceiling (unless ceiling is zero).
func (p *planner) bridgeKube(ga release.Product, ceiling release.KubeVersion) (release.KubeVersion, error) {
	running, ok := p.cat.Product(p.state.Platform)
	if !ok {
		return release.KubeVersion{}, fmt.Errorf("running product release '%s' is not among the uploaded releases, so its Kubernetes versions are unknown", p.state.Platform)
	}
	best := release.KubeVersion{}
	if ga.Supports(p.state.Kubernetes) {
		best = p.state.Kubernetes
	}
	for _, k := range p.cat.Kubes {
		v := k.Version
		if !k.State.Usable() || !running.Supports(v) || !ga.Supports(v) {
			continue
		}
		if v.Compare(p.state.Kubernetes) < 0 || (!ceiling.IsZero() && v.Compare(ceiling) > 0) {
			continue
		}
		if best.IsZero() || v.Compare(best) > 0 {
			best = v
		}
	}
	if best.IsZero() {
		return best, fmt.Errorf("no usable Kubernetes version from %s up is supported by both '%s' (%s) and '%s' (%s); upload a Kubernetes version both support",
			p.state.Kubernetes, running.ID, release.JoinKubeVersions(running.Kube), ga.ID, release.JoinKubeVersions(ga.Kube))
	}
	return best, nil
}

// kubeTo upgrades Kubernetes to v (no step when v is zero or already
// running), one minor version per step on duplex systems.
func (p *planner) kubeTo(v release.KubeVersion, reason string) error {
	if v.IsZero() || v.Compare(p.state.Kubernetes) <= 0 {
		return nil
	}
	for p.mode.OneMinorPerStep() && !p.state.Kubernetes.WithinOneMinor(v) {
		next, err := p.nextMinor(v)
		if err != nil {
			return err
		}
		stepReason := fmt.Sprintf("one minor version per step on a %s system, on the way to %s", modeName(p.mode), v)
		if err := p.add(DeployStep{Kind: KubeUpgrade, Kube: next, Reason: stepReason}); err != nil {
			return err
		}
	}
	return p.add(DeployStep{Kind: KubeUpgrade, Kube: v, Reason: reason})
}

// nextMinor picks the stop in the next minor version on the way to v: the
// highest usable version of that minor the running product release
// supports and that upgrades from the running Kubernetes version.
func (p *planner) nextMinor(v release.KubeVersion) (release.KubeVersion, error) {
	from := p.state.Kubernetes
	if from.Major != v.Major {
		return release.KubeVersion{}, fmt.Errorf("kubernetes %s to %s changes the major version, which a %s system cannot do step by step", from, v, modeName(p.mode))
	}
	running, _ := p.cat.Product(p.state.Platform)
	best := release.KubeVersion{}
	for _, k := range p.cat.Kubes {
		c := k.Version
		if c.Major != from.Major || c.Minor != from.Minor+1 || !k.State.Usable() || !running.Supports(c) || !k.UpgradableFrom(from) {
			continue
		}
		if best.IsZero() || c.Compare(best) > 0 {
			best = c
		}
	}
	if best.IsZero() {
		return best, fmt.Errorf("a %s system upgrades Kubernetes one minor version per step, and no usable v%d.%d.x that '%s' supports upgrades from %s on the way to %s; upload one",
			modeName(p.mode), from.Major, from.Minor+1, p.state.Platform, from, v)
	}
	return best, nil
}
