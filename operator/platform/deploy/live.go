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
// started from. Kubernetes versions are sysinv's list as it is: the
// running release's versions (sysinv/common/kubernetes.py
// get_kube_versions); nothing is added for releases not running yet (USM
// does not say which versions they run; see plan.Compute).
func LiveFrom(a Answers) (Live, error) {
	var l Live
	if a.System != nil {
		l.Mode = v1alpha1.SystemMode(a.System.SystemMode)
	}
	var err error
	if l.Products, l.Running.Platform, l.Skipped, err = products(a.Releases); err != nil {
		return l, err
	}
	if l.Kubes, l.Running.Kubernetes, err = kubes(a.KubeVersions, a.KubeUpgrades); err != nil {
		return l, err
	}
	for _, h := range a.Hosts {
		if h.ActiveController() {
			l.ActiveController = h.Hostname
		}
	}
	for _, d := range a.Deploys {
		l.DeployInProgress = fmt.Sprintf("%s → %s (%s)", d.FromRelease, d.ToRelease, d.State)
		l.Deploy = &USMDeploy{From: d.FromRelease, To: d.ToRelease, State: d.State}
	}
	for _, k := range a.KubeUpgrades {
		if k.State != KubeUpgradeAborted {
			l.KubeUpgradeInProgress = fmt.Sprintf("%s → %s (%s)", k.FromVersion, k.ToVersion, k.State)
		}
	}
	if a.Strategy != nil {
		l.Strategy = StrategyFrom(a.Strategy)
	}
	return l, nil
}

// KubeUpgradeAborted is sysinv's upgrade-aborted (common/kubernetes.py
// KUBE_UPGRADE_ABORTED).
const KubeUpgradeAborted = "upgrade-aborted"

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
		// The operator always names the release of a forward step; a
		// sw-upgrade strategy without one is a rollback (or a cleanup,
		// which the operator never creates and treats the same: not a
		// step of its plan).
		out.Rollback = len(s.Release) == 0
	}
	if out.Reason == "" && (s.State == vim.StateBuildFailed || s.State == vim.StateBuildTimeout) {
		out.Reason = s.BuildPhase.Reason
	}
	out.ApplyFailed = s.State == vim.StateApplyFailed || s.State == vim.StateApplyTimeout ||
		s.ApplyPhase.Result == vim.ResultFailed || s.ApplyPhase.Result == vim.ResultTimedOut
	out.ApplyTimedOut = s.State == vim.StateApplyTimeout || s.ApplyPhase.Result == vim.ResultTimedOut
	if out.ApplyFailed && s.ApplyPhase.Reason != "" && s.State != vim.StateApplyFailed && s.State != vim.StateApplyTimeout {
		// the abort phase the VIM ran after the failure: its reason, if
		// any, says why that abort did not end aborted
		out.Reason = s.ApplyPhase.Reason
		if r := s.AbortPhase.Reason; r != "" && r != out.Reason {
			out.Reason += "; abort phase: " + r
		}
	}
	if out.Reason == "" && out.ApplyFailed {
		out.Reason = s.ApplyPhase.Reason
	}
	return out
}

// products converts USM's releases, sorted by id, and finds the running
// release: the highest deployed or committed one. A release that is not a
// product release (another component), whose id USM's form does not fit,
// or a requires entry of that kind, is left out and named in skipped: the
// planner cannot use it, and the rest of the catalog still plans.
func products(rels []vim.Release) (out []v1alpha1.UploadedProductRelease, running release.ID, skipped []string, err error) {
	type item struct {
		id  release.ID
		out v1alpha1.UploadedProductRelease
	}
	var items []item
	for _, r := range rels {
		id, err := release.ParseProductID(r.ReleaseID)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("usm release %q: %v", r.ReleaseID, err))
			continue
		}
		p := v1alpha1.UploadedProductRelease{ReleaseID: r.ReleaseID, State: v1alpha1.ProductReleaseState(r.State)}
		for _, q := range r.Requires {
			if _, err := release.ParseProductID(q); err != nil {
				skipped = append(skipped, fmt.Sprintf("usm release %q requires %q: %v", r.ReleaseID, q, err))
				continue
			}
			p.Requires = append(p.Requires, q)
		}
		items = append(items, item{id, p})
		st := release.ProductState(r.State)
		if (st == release.ProductDeployed || st == release.ProductCommitted) && (running.IsZero() || id.Compare(running) > 0) {
			running = id
		}
	}
	if running.IsZero() {
		return nil, running, skipped, fmt.Errorf("usm lists no deployed product release (starlingx-MM.mm[.pp]), so the running product release is unknown")
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].id.Compare(items[j].id) < 0 })
	out = make([]v1alpha1.UploadedProductRelease, len(items))
	for i, it := range items {
		out[i] = it.out
	}
	return out, running, skipped, nil
}

// kubes converts sysinv's versions, sorts them and finds the running one.
func kubes(vs []vim.KubeVersion, ups []vim.KubeUpgrade) ([]v1alpha1.UploadedK8sVersion, release.KubeVersion, error) {
	var running release.KubeVersion
	var out []v1alpha1.UploadedK8sVersion
	for _, k := range vs {
		v, err := release.ParseKubeVersion(k.Version)
		if err != nil {
			return nil, running, fmt.Errorf("sysinv kubernetes version %q: %w", k.Version, err)
		}
		out = append(out, v1alpha1.UploadedK8sVersion{Version: k.Version, State: v1alpha1.K8sVersionState(k.State),
			UpgradeFrom: append([]string(nil), k.UpgradeFrom...)})
		if release.KubeState(k.State) == release.KubeActive {
			running = v
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
