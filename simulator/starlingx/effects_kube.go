package starlingx

// runKubeEffect performs the sysinv side of kube-upgrade steps
// (kube-upgrade-start, per-state steps, control planes, kubelets, cleanup).
func (s *System) runKubeEffect(e effect) {
	switch e.kind {
	case effKubeStart:
		s.kubeUpgrade = &KubeUpgradeRecord{UUID: s.newUUID(), FromVersion: s.activeKube(), ToVersion: e.version, State: KubeUpgradeStarted}
	case effKubeState:
		s.setKubeState(e.state)
	case effControlPlane:
		for _, n := range e.hosts {
			s.host(n).ControlPlaneVersion = e.version
		}
		s.setKubeState(e.state)
	case effKubelet:
		for _, n := range e.hosts {
			s.host(n).KubeletVersion = e.version
		}
		s.setKubeState(KubeUpgradeUpgradingKubelets)
	case effKubeCleanup:
		s.kubeUpgrade = nil
	}
}

func (s *System) setKubeState(state string) {
	if s.kubeUpgrade != nil {
		s.kubeUpgrade.State = state
	}
}

// kubeAbortAtOnce are the kube_upgrade states sysinv aborts without
// touching Kubernetes (kube_upgrade.py KubeUpgradeController.patch,
// upgrade-aborting: "no actual k8s changes done").
var kubeAbortAtOnce = []string{KubeUpgradeStarted, "downloading-images", "downloading-images-failed", KubeUpgradeDownloadedImages,
	"pre-updating-apps", "pre-updating-apps-failed", KubeUpgradePreUpdatedApps}

// kubeAbortRefused are the states sysinv refuses to abort in ("Cannot
// abort the kubernetes upgrade it is in %s state").
var kubeAbortRefused = []string{KubeUpgradeAborting, KubeUpgradeAborted, KubeUpgradeComplete,
	"post-updating-apps", "post-updating-apps-failed", KubeUpgradePostUpdatedApps}

// startKubeAbort is "system kube-upgrade-abort" sent by the VIM's
// kube-upgrade-abort step (simplex only): early states are aborted at
// once, later ones are upgrade-aborting while the conductor restores the
// from_version (conductor kube_upgrade_abort), refused ones stay.
func (s *System) startKubeAbort() {
	u := s.kubeUpgrade
	switch {
	case u == nil, contains(kubeAbortRefused, u.State):
	case contains(kubeAbortAtOnce, u.State):
		u.State = KubeUpgradeAborted
	default:
		u.State = KubeUpgradeAborting
	}
}

// endKubeAbort ends the kube-upgrade-abort step: an aborting upgrade has
// every control plane and kubelet back at from_version and is
// upgrade-aborted; the step succeeds when there is no upgrade or it is
// aborted, and fails on any other state (KubeUpgradeAbortStep
// _response_callback: "Unexpected state: %s").
func (s *System) endKubeAbort() string {
	u := s.kubeUpgrade
	if u == nil {
		return ""
	}
	if u.State == KubeUpgradeAborting {
		for _, h := range s.hosts {
			if h.ControlPlaneVersion != "" {
				h.ControlPlaneVersion = u.FromVersion
			}
			h.KubeletVersion = u.FromVersion
		}
		u.State = KubeUpgradeAborted
	}
	if u.State != KubeUpgradeAborted {
		return "Unexpected state: " + u.State
	}
	return ""
}
