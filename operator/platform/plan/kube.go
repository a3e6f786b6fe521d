package plan

import (
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// kubeKnowledge is how much sysinv's kube_versions (Catalog.Kubes, the
// versions the release Catalog.KubesOf installed) says about the
// Kubernetes versions of a product release the plan will be running.
type kubeKnowledge int

const (
	// kubesListed: the release is KubesOf; the list is what it runs.
	kubesListed kubeKnowledge = iota
	// kubesAtLeast: a later patch of KubesOf's major. It keeps the listed
	// versions and may install more; an unlisted version is checked once
	// the patch runs.
	kubesAtLeast
	// kubesUnknown: another major release. Its versions are in its feed,
	// read only by the USM deploy precheck; sysinv lists them once it runs.
	kubesUnknown
)

func knowledge(platform release.ID, cat release.Catalog) kubeKnowledge {
	switch {
	case cat.KubesOf.IsZero() || platform.Equal(cat.KubesOf):
		return kubesListed
	case platform.SameMajor(cat.KubesOf):
		return kubesAtLeast
	}
	return kubesUnknown
}

// Deferred reports whether sysinv cannot tell yet whether the system runs
// Kubernetes v once it runs platform: platform is another major than the
// one listed, or a later patch and v is not listed.
func Deferred(platform release.ID, v release.KubeVersion, cat release.Catalog) bool {
	switch knowledge(platform, cat) {
	case kubesUnknown:
		return true
	case kubesAtLeast:
		_, listed := cat.Kube(v)
		return !listed
	}
	return false
}

// deferredCheck is the Check of a kube-upgrade step whose version sysinv
// cannot confirm before the step's platform release runs.
func deferredCheck(platform release.ID, v release.KubeVersion, mode SystemMode) string {
	msg := fmt.Sprintf("checked when the step starts: sysinv lists the Kubernetes versions of the release it runs, and %s is not listed for it yet; once %s runs the plan is recomputed from its list", v, platform)
	if mode.OneMinorPerStep() {
		msg += fmt.Sprintf(", one step per minor version on a %s system", modeName(mode))
	}
	return msg
}

// bridgeKube is the Kubernetes version to run before a major upgrade: the
// highest usable version sysinv lists for the running release, not below
// the running one and not above ceiling (unless ceiling is zero). Whether
// the new major's GA runs it is known only to the deploy precheck, which
// reads the GA's feed; the GA step says so in its Check.
func (p *planner) bridgeKube(ceiling release.KubeVersion) release.KubeVersion {
	best := p.state.Kubernetes
	if knowledge(p.state.Platform, p.cat) == kubesUnknown {
		return best
	}
	for _, k := range p.cat.Kubes {
		v := k.Version
		if !k.State.Usable() || v.Compare(best) <= 0 || (!ceiling.IsZero() && v.Compare(ceiling) > 0) {
			continue
		}
		best = v
	}
	return best
}

// kubeTo upgrades Kubernetes to v (no step when v is zero or already
// running), one minor version per step on duplex systems where sysinv's
// list shows the versions in between; a version sysinv cannot show yet
// (after a planned sw-deploy) is one step whose Check says so.
func (p *planner) kubeTo(v release.KubeVersion, reason string) error {
	if v.IsZero() || v.Compare(p.state.Kubernetes) <= 0 {
		return nil
	}
	if Deferred(p.state.Platform, v, p.cat) {
		return p.add(DeployStep{Kind: KubeUpgrade, Kube: v, Reason: reason, Check: deferredCheck(p.state.Platform, v, p.mode)})
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
// highest usable version of that minor sysinv lists that upgrades from the
// running Kubernetes version (its upgrade_from).
func (p *planner) nextMinor(v release.KubeVersion) (release.KubeVersion, error) {
	from := p.state.Kubernetes
	if from.Major != v.Major {
		return release.KubeVersion{}, fmt.Errorf("kubernetes %s to %s changes the major version, which a %s system cannot do step by step", from, v, modeName(p.mode))
	}
	best := release.KubeVersion{}
	for _, k := range p.cat.Kubes {
		c := k.Version
		if c.Major != from.Major || c.Minor != from.Minor+1 || !k.State.Usable() || !k.UpgradableFrom(from) {
			continue
		}
		if best.IsZero() || c.Compare(best) > 0 {
			best = c
		}
	}
	if best.IsZero() {
		return best, fmt.Errorf("a %s system upgrades Kubernetes one minor version per step, and sysinv lists no usable v%d.%d.x for '%s' that upgrades from %s on the way to %s; upload one",
			modeName(p.mode), from.Major, from.Minor+1, p.state.Platform, from, v)
	}
	return best, nil
}
