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
