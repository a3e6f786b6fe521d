package deploy

import (
	"fmt"
	"sort"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/plan"
	"github.com/lunadas/upgrade-operator/operator/platform/release"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

// Answers are the StarlingX answers one observation collects; LiveFrom
// turns them into Live.
type Answers struct {
	System       *vim.System
	Releases     []vim.Release
	KubeVersions []vim.KubeVersion
	KubeUpgrades []vim.KubeUpgrade
	Deploys      []vim.Deploy
	Hosts        []vim.Host
	Strategy     *vim.Strategy
}

// LiveFrom converts what the system answered. The running product release
// is the highest deployed (or committed) one; the running Kubernetes
// version the active one, else the version a kube upgrade in progress
// started from. Kubernetes versions are sysinv's list plus the versions
// deployable product releases support that sysinv does not list yet
// (sysinv lists only the running release's versions; a major upgrade
// targets the new release's), as available.
func LiveFrom(a Answers) (Live, error) {
	var l Live
	if a.System != nil {
		l.Mode = v1alpha1.SystemMode(a.System.SystemMode)
	}
	var err error
	if l.Products, l.Running.Platform, err = products(a.Releases); err != nil {
		return l, err
	}
	if l.Kubes, l.Running.Kubernetes, err = kubes(a.KubeVersions, a.KubeUpgrades, l.Products); err != nil {
		return l, err
	}
	for _, h := range a.Hosts {
		if h.ActiveController() {
			l.ActiveController = h.Hostname
		}
	}
	for _, d := range a.Deploys {
		l.DeployInProgress = fmt.Sprintf("%s → %s (%s)", d.FromRelease, d.ToRelease, d.State)
	}
	for _, k := range a.KubeUpgrades {
		l.KubeUpgradeInProgress = fmt.Sprintf("%s → %s (%s)", k.FromVersion, k.ToVersion, k.State)
	}
	if a.Strategy != nil {
		l.Strategy = StrategyFrom(a.Strategy)
	}
	return l, nil
}

// StrategyFrom converts a VIM strategy.
func StrategyFrom(s *vim.Strategy) *Strategy {
	out := &Strategy{UUID: s.UUID, State: s.State, Progress: s.Progress(), Reason: s.Phase().Reason}
	switch s.Name {
	case vim.StrategyKubeUpgrade:
		out.Kind, out.Target = plan.KubeUpgrade, s.KubeTarget()
	default:
		out.Kind = plan.SwDeploy
		out.Target = s.ReleaseID
		if len(s.Release) > 0 {
			out.Target = s.Release[0]
		}
	}
	if out.Reason == "" && (s.State == vim.StateBuildFailed || s.State == vim.StateBuildTimeout) {
		out.Reason = s.BuildPhase.Reason
	}
	if out.Reason == "" && (s.State == vim.StateApplyFailed || s.State == vim.StateApplyTimeout) {
		out.Reason = s.ApplyPhase.Reason
	}
	return out
}

// products converts USM's releases, sorted by id, and finds the running
// release: the highest deployed or committed one.
func products(rels []vim.Release) ([]v1alpha1.UploadedProductRelease, release.ID, error) {
	type item struct {
		id  release.ID
		out v1alpha1.UploadedProductRelease
	}
	var items []item
	var running release.ID
	for _, r := range rels {
		id, err := release.ParseID(r.ReleaseID)
		if err != nil {
			return nil, running, fmt.Errorf("usm release %q: %w", r.ReleaseID, err)
		}
		p := v1alpha1.UploadedProductRelease{ReleaseID: r.ReleaseID, State: v1alpha1.ProductReleaseState(r.State),
			Requires: append([]string(nil), r.Requires...), SupportedK8sVersions: append([]string(nil), r.SupportedK8sVersions...)}
		items = append(items, item{id, p})
		st := release.ProductState(r.State)
		if (st == release.ProductDeployed || st == release.ProductCommitted) && (running.IsZero() || id.Compare(running) > 0) {
			running = id
		}
	}
	if running.IsZero() {
		return nil, running, fmt.Errorf("usm lists no deployed release, so the running product release is unknown")
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].id.Compare(items[j].id) < 0 })
	out := make([]v1alpha1.UploadedProductRelease, len(items))
	for i, it := range items {
		out[i] = it.out
	}
	return out, running, nil
}

// kubes converts sysinv's versions, adds the ones deployable products
// support, sorts them and finds the running version.
func kubes(vs []vim.KubeVersion, ups []vim.KubeUpgrade, prods []v1alpha1.UploadedProductRelease) ([]v1alpha1.UploadedK8sVersion, release.KubeVersion, error) {
	var running release.KubeVersion
	seen := map[string]bool{}
	var out []v1alpha1.UploadedK8sVersion
	for _, k := range vs {
		v, err := release.ParseKubeVersion(k.Version)
		if err != nil {
			return nil, running, fmt.Errorf("sysinv kubernetes version %q: %w", k.Version, err)
		}
		seen[k.Version] = true
		out = append(out, v1alpha1.UploadedK8sVersion{Version: k.Version, State: v1alpha1.K8sVersionState(k.State),
			UpgradeFrom: append([]string(nil), k.UpgradeFrom...)})
		if release.KubeState(k.State) == release.KubeActive {
			running = v
		}
	}
	for _, p := range prods {
		if !release.ProductState(p.State).Deployable() {
			continue
		}
		for _, s := range p.SupportedK8sVersions {
			if _, err := release.ParseKubeVersion(s); err == nil && !seen[s] {
				seen[s] = true
				out = append(out, v1alpha1.UploadedK8sVersion{Version: s, State: v1alpha1.K8sVersionState(release.KubeAvailable)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return release.MustParseKubeVersion(out[i].Version).Compare(release.MustParseKubeVersion(out[j].Version)) < 0
	})
	if running.IsZero() {
		for _, u := range ups {
			if v, err := release.ParseKubeVersion(u.FromVersion); err == nil {
				running = v
			}
		}
	}
	if running.IsZero() {
		return out, running, fmt.Errorf("sysinv lists no active kubernetes version and no kube upgrade in progress, so the running version is unknown")
	}
	return out, running, nil
}
