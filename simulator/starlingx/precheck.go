package starlingx

import (
	"fmt"
	"strings"
)

// precheck is sw-deploy-precheck: USM's deploy precheck (starlingx/update
// software/scripts/deploy-precheck) as far as the model knows the system.
// An unknown release passes here and fails the build afterwards with the
// VIM's "Software release does not exist or is unavailable".
func (s *System) precheck(st *Strategy) string {
	target := s.swTarget(st)
	if target == nil {
		return ""
	}
	var issues []string
	if u := s.kubeUpgrade; u != nil && u.State != KubeUpgradeAborted {
		issues = append(issues, fmt.Sprintf("Kubernetes upgrade does not block deployment: [Fail] (upgrade to %s is %s)", u.ToVersion, u.State))
	}
	if d := s.deploy; d != nil && d.toID != target.ID {
		issues = append(issues, fmt.Sprintf("Deployment in progress: %s to %s", d.FromRelease, d.ToRelease))
	}
	tid, did := mustID(target.ID), mustID(s.deployed)
	if tid.compare(did) < 0 && !tid.sameMajor(did) {
		// a lower release of the running major is a patch removal (see
		// startDeploy); one of an older major is unavailable after the
		// major upgrade and never reaches the precheck
		issues = append(issues, fmt.Sprintf("Release %s is older than the deployed release %s: downgrades are not supported", target.ID, s.deployed))
	}
	if tid.compare(did) < 0 && tid.sameMajor(did) && target.State != ReleaseDeployed && target.State != ReleaseCommitted {
		// software_controller.py _validate_releases_for_select: "removing
		// a release is only supported by selecting a previous product
		// release in deployed state"
		issues = append(issues, fmt.Sprintf("Release %s is %s: removing a release is only supported by selecting a previous product release in deployed state", target.ID, target.State))
	}
	if a := s.precheckAlarmIssue(st.Request.AlarmRestrictions); a != "" {
		issues = append(issues, a)
	}
	if tid.sameMajor(did) {
		issues = append(issues, s.patchIssues(target)...)
	} else {
		issues = append(issues, s.majorIssues(target, tid)...)
	}
	if len(issues) == 0 {
		return ""
	}
	return fmt.Sprintf("The following issues have been detected, which prevent deploying %s: %s", target.ID, strings.Join(issues, "; "))
}

// patchIssues: every required release is deployed, or is an older
// deployable patch of the same major that USM deploys along.
func (s *System) patchIssues(target *Release) []string {
	var issues []string
	tid := mustID(target.ID)
	for _, q := range target.Requires {
		r := s.release(q)
		switch {
		case r == nil:
			issues = append(issues, fmt.Sprintf("Required release %s is not uploaded", q))
		case r.State == ReleaseDeployed || r.State == ReleaseCommitted:
		case r.State == ReleaseAvailable && mustID(q).sameMajor(tid) && mustID(q).compare(tid) < 0:
		default:
			issues = append(issues, fmt.Sprintf("Required release %s is %s", q, r.State))
		}
	}
	if active := s.activeKube(); len(target.FeedKubeVersions) > 0 && !target.supportsKube(active) {
		issues = append(issues, fmt.Sprintf("Active kubernetes version [%s] is a valid supported version: [Fail] (supported: %s)",
			active, strings.Join(target.FeedKubeVersions, ", ")))
	}
	return issues
}

// majorIssues: entry at the GA, required patches deployed, the active
// Kubernetes version supported by the new release and controller-0 active.
func (s *System) majorIssues(target *Release, tid releaseID) []string {
	var issues []string
	if tid.patch != 0 {
		issues = append(issues, fmt.Sprintf("A major release is deployed from its GA release; deploy starlingx-%s.0 first", tid.majorStr))
	}
	for _, q := range target.Requires {
		if r := s.release(q); r == nil || (r.State != ReleaseDeployed && r.State != ReleaseCommitted) {
			issues = append(issues, fmt.Sprintf("Required patches are applied: [Fail] (%s is not deployed)", q))
		}
	}
	if active := s.activeKube(); !target.supportsKube(active) {
		issues = append(issues, fmt.Sprintf("Upgrade active kubernetes version [%s] to one of the supported versions [%s]. See \"system kube-version-list\"",
			active, strings.Join(target.FeedKubeVersions, ", ")))
	}
	if s.cfg.Mode.IsDuplex() && s.activeController().Hostname != Controller0 {
		issues = append(issues, "Active controller is controller-0: [Fail]")
	}
	return issues
}

// checkKubeVersions is query-kube-versions: the target must be one of the
// versions sysinv lists for the running release, newer than the running
// one (KubeUpgradeStages._build_kube_upgrade_stages).
func (s *System) checkKubeVersions(to string) string {
	for _, v := range s.kubeVersionViews() {
		if v.Version != to {
			continue
		}
		if v.State == KubeActive && s.kubeUpgrade == nil {
			return fmt.Sprintf("Kubernetes version %s is already active; nothing to upgrade", to)
		}
		if v.State == KubeUnavailable && s.kubeUpgrade == nil {
			return fmt.Sprintf("Invalid to_version value: '%s' (state unavailable)", to)
		}
		return ""
	}
	return fmt.Sprintf("Invalid to_version value: '%s'", to)
}

// checkKubeUpgrade is query-kube-upgrade: no platform deploy may be under
// way and no kube upgrade to another version.
func (s *System) checkKubeUpgrade(to string) string {
	if d := s.deploy; d != nil {
		return fmt.Sprintf("a software deployment from %s to %s is in progress; kubernetes cannot be upgraded until it is completed and deleted", d.FromRelease, d.ToRelease)
	}
	if u := s.kubeUpgrade; u != nil && u.ToVersion != to && u.State != KubeUpgradeAborted {
		return fmt.Sprintf("a kubernetes upgrade to %s is in progress (%s); finish it before upgrading to %s", u.ToVersion, u.State, to)
	}
	return ""
}
