package starlingx

import "time"

// stepTimeouts are the VIM's per-step timeouts (timeout_in_secs in
// nfv-vim strategy/_strategy_steps.py and steps/kube_upgrade_steps.py).
// A step whose duration exceeds its timeout ends "timed-out".
var stepTimeouts = map[string]time.Duration{
	StepQueryAlarms:            60 * time.Second,
	StepQueryUpgrade:           60 * time.Second,
	StepSwDeployPrecheck:       60 * time.Second,
	StepStartUpgrade:           3600 * time.Second,
	StepSwactHosts:             900 * time.Second,
	StepLockHosts:              900 * time.Second,
	StepUpgradeHosts:           3600 * time.Second,
	StepUnlockHosts:            1800 * time.Second,
	StepSystemStabilize:        60 * time.Second,
	StepWaitAlarmsClear:        2400 * time.Second,
	StepActivateUpgrade:        3600 * time.Second,
	StepCompleteUpgrade:        300 * time.Second,
	StepDeployDelete:           300 * time.Second,
	StepSwDeployAbort:          60 * time.Second,
	StepSwDeployActivateRbk:    1830 * time.Second,
	StepKubeUpgradeAbort:       600 * time.Second,
	StepQueryKubeVersions:      60 * time.Second,
	StepQueryKubeUpgrade:       60 * time.Second,
	StepQueryKubeHostUpgrade:   200 * time.Second,
	StepKubeCleanupAborted:     600 * time.Second,
	StepKubeUpgradeStart:       600 * time.Second,
	StepKubeDownloadImages:     1800 * time.Second,
	StepKubePreApplication:     1800 * time.Second,
	StepKubeNetworking:         900 * time.Second,
	StepKubeStorage:            900 * time.Second,
	StepKubeHostCordon:         600 * time.Second,
	StepKubeHostControlPlane:   420 * time.Second,
	StepKubeHostKubelet:        900 * time.Second,
	StepKubeHostUncordon:       600 * time.Second,
	StepKubeUpgradeComplete:    600 * time.Second,
	StepKubePostApplication:    1800 * time.Second,
	StepKubeUpgradeCleanup:     600 * time.Second,
	StepWaitKubeControlPlanePo: 180 * time.Second,
}

// defaultStepDurations are how long each step takes in model time unless
// Config.StepDurations overrides it. They are plausible, not measured: a
// patch sw-upgrade on a duplex takes about 40 model minutes, a kube-upgrade
// about 50.
var defaultStepDurations = map[string]time.Duration{
	StepQueryAlarms:            5 * time.Second,
	StepQueryUpgrade:           5 * time.Second,
	StepSwDeployPrecheck:       30 * time.Second,
	StepStartUpgrade:           5 * time.Minute,
	StepSwactHosts:             2 * time.Minute,
	StepLockHosts:              1 * time.Minute,
	StepUpgradeHosts:           5 * time.Minute,
	StepUnlockHosts:            10 * time.Minute,
	StepSystemStabilize:        15 * time.Second,
	StepWaitAlarmsClear:        1 * time.Minute,
	StepActivateUpgrade:        5 * time.Minute,
	StepCompleteUpgrade:        1 * time.Minute,
	StepDeployDelete:           1 * time.Minute,
	StepSwDeployAbort:          20 * time.Second,
	StepSwDeployActivateRbk:    5 * time.Minute,
	StepKubeUpgradeAbort:       3 * time.Minute,
	StepQueryKubeVersions:      5 * time.Second,
	StepQueryKubeUpgrade:       5 * time.Second,
	StepQueryKubeHostUpgrade:   5 * time.Second,
	StepKubeCleanupAborted:     10 * time.Second,
	StepKubeUpgradeStart:       1 * time.Minute,
	StepKubeDownloadImages:     5 * time.Minute,
	StepKubePreApplication:     2 * time.Minute,
	StepKubeNetworking:         2 * time.Minute,
	StepKubeStorage:            1 * time.Minute,
	StepKubeHostCordon:         30 * time.Second,
	StepKubeHostControlPlane:   4 * time.Minute,
	StepKubeHostKubelet:        3 * time.Minute,
	StepKubeHostUncordon:       30 * time.Second,
	StepKubeUpgradeComplete:    1 * time.Minute,
	StepKubePostApplication:    2 * time.Minute,
	StepKubeUpgradeCleanup:     30 * time.Second,
	StepWaitKubeControlPlanePo: 30 * time.Second,
}

// stepDuration is the model-time length of a step named name.
func (s *System) stepDuration(name string) time.Duration {
	if d, ok := s.cfg.StepDurations[name]; ok {
		return d
	}
	if d, ok := defaultStepDurations[name]; ok {
		return d
	}
	return 30 * time.Second
}

// stepTimeout is the VIM's timeout for a step named name.
func stepTimeout(name string) time.Duration {
	if d, ok := stepTimeouts[name]; ok {
		return d
	}
	return 600 * time.Second
}
