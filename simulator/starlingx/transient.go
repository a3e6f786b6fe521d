package starlingx

// A step's effect runs when the step ends (effects.go). The services the
// VIM drives show a state of their own while the step runs, and another
// when it fails: USM's deploy is "start", "host", "activate",
// "activate-rollback", "host-rollback" while those run and "*-failed"
// when they fail (software/states.py DEPLOY_STATES, deploy_state.py
// deploy_state_transition); sysinv's kube_upgrade is "downloading-images",
// "upgrading-networking", … while a kube step runs and the "-failed"
// variant when it fails (sysinv/common/kubernetes.py KUBE_UPGRADE_*,
// set by kube_upgrade.py KubeUpgradeController.patch and the conductor).

// kubeInProgress maps the kube_upgrade state a step reaches to the state
// sysinv shows while the step runs and the one it shows when it fails.
var kubeInProgress = map[string][2]string{
	KubeUpgradeDownloadedImages: {"downloading-images", "downloading-images-failed"},
	KubeUpgradePreUpdatedApps:   {"pre-updating-apps", "pre-updating-apps-failed"},
	KubeUpgradeUpgradedNetwork:  {"upgrading-networking", "upgrading-networking-failed"},
	KubeUpgradeUpgradedStorage:  {"upgrading-storage", "upgrading-storage-failed"},
	KubeUpgradeCordonComplete:   {"cordon-started", "cordon-failed"},
	KubeUpgradeFirstMaster:      {"upgrading-first-master", "upgrading-first-master-failed"},
	KubeUpgradeSecondMaster:     {"upgrading-second-master", "upgrading-second-master-failed"},
	KubeUpgradeUncordonComplete: {"uncordon-started", "uncordon-failed"},
	KubeUpgradePostUpdatedApps:  {"post-updating-apps", "post-updating-apps-failed"},
}

// stepStarted shows the running step's transient state.
func (s *System) stepStarted(st *Strategy, sp *Step) {
	d := s.deploy
	switch sp.effect.kind {
	case effStartDeploy:
		s.startDeploy(st)
	case effUpgradeHost:
		if d != nil {
			s.setDeployState(DeployHost)
		}
	case effActivate:
		if d != nil && (d.State == DeployHostDone || d.State == DeployActivateFailed) {
			s.setDeployState(DeployActivate)
		}
	case effActivateRollback:
		if d != nil && (d.State == DeployActivateRollbackPending || d.State == DeployActivateRollbackFailed) {
			s.setDeployState(DeployActivateRollback)
		}
	case effRollbackHost:
		if d != nil {
			s.setDeployState(DeployHostRollback)
		}
	case effKubeState, effControlPlane:
		if p, ok := kubeInProgress[sp.effect.state]; ok {
			s.setKubeState(p[0])
		}
	case effKubeAbort:
		s.startKubeAbort()
	}
}

// stepFailed shows the failed state of a step that failed or timed out.
func (s *System) stepFailed(sp *Step) {
	d := s.deploy
	failed := map[string]string{DeployStart: DeployStartFailed, DeployHost: DeployHostFailed, DeployActivate: DeployActivateFailed,
		DeployActivateRollback: DeployActivateRollbackFailed, DeployHostRollback: DeployHostRollbackFailed}
	switch sp.effect.kind {
	case effStartDeploy, effUpgradeHost, effActivate, effActivateRollback, effRollbackHost:
		if d != nil && failed[d.State] != "" {
			s.setDeployState(failed[d.State])
		}
	case effKubeState, effControlPlane:
		if p, ok := kubeInProgress[sp.effect.state]; ok {
			s.setKubeState(p[1])
		}
	case effKubeAbort:
		if u := s.kubeUpgrade; u != nil && u.State == KubeUpgradeAborting {
			u.State = KubeUpgradeAbortingFailed
		}
	}
}
