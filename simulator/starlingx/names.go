package starlingx

// Stage names (nfv-vim strategy/_strategy_stages.py STRATEGY_STAGE_NAME).
// Per-version kube stages carry the version after a space, as the VIM names
// them: "kube-upgrade-first-control-plane v1.34.1".
const (
	StageSwUpgradeQuery       = "sw-upgrade-query"
	StageSwUpgradeStart       = "sw-upgrade-start"
	StageSwUpgradeControllers = "sw-upgrade-controllers"
	StageSwUpgradeStorage     = "sw-upgrade-storage-hosts"
	StageSwUpgradeWorkers     = "sw-upgrade-worker-hosts"
	StageSwUpgradeComplete    = "sw-upgrade-complete"
	StageSwDeployDelete       = "sw-deploy-delete"
	// Rollback strategy stages (SwUpgradeStrategy._add_rollback_start_stage,
	// _add_rollback_complete_stage).
	StageSwUpgradeRollbackStart    = "sw-upgrade-rollback-start"
	StageSwUpgradeRollbackComplete = "sw-upgrade-rollback-complete"

	StageKubeUpgradeQuery        = "kube-upgrade-query"
	StageKubeUpgradeStart        = "kube-upgrade-start"
	StageKubeDownloadImages      = "kube-upgrade-download-images"
	StageKubePreApplication      = "kube-pre-application-update"
	StageKubeNetworking          = "kube-upgrade-networking"
	StageKubeStorage             = "kube-upgrade-storage"
	StageKubeHostCordon          = "kube-host-cordon"
	StageKubeFirstControlPlane   = "kube-upgrade-first-control-plane"
	StageKubeSecondControlPlane  = "kube-upgrade-second-control-plane"
	StageKubeKubelet             = "kube-upgrade-kubelet"
	StageKubeHostUncordon        = "kube-host-uncordon"
	StageKubeUpgradeComplete     = "kube-upgrade-complete"
	StageKubePostApplication     = "kube-post-application-update"
	StageKubeUpgradeCleanup      = "kube-upgrade-cleanup"
	StageKubeWaitControlPlanePod = "kube-wait-control-plane-pods-ready"
)

// Step names (nfv-vim strategy/_constants.py STRATEGY_STEP_NAME).
const (
	StepQueryAlarms            = "query-alarms"
	StepQueryUpgrade           = "query-upgrade"
	StepSwDeployPrecheck       = "sw-deploy-precheck"
	StepStartUpgrade           = "start-upgrade"
	StepSwactHosts             = "swact-hosts"
	StepLockHosts              = "lock-hosts"
	StepUpgradeHosts           = "upgrade-hosts"
	StepUnlockHosts            = "unlock-hosts"
	StepSystemStabilize        = "system-stabilize"
	StepWaitAlarmsClear        = "wait-alarms-clear"
	StepActivateUpgrade        = "activate-upgrade"
	StepCompleteUpgrade        = "complete-upgrade"
	StepDeployDelete           = "deploy-delete"
	StepSwDeployAbort          = "sw-deploy-abort"             // SwDeployAbortStep, timeout 60 s
	StepSwDeployActivateRbk    = "sw-deploy-activate-rollback" // SwDeployActivateRollbackStep, timeout 1830 s
	StepKubeUpgradeAbort       = "kube-upgrade-abort"          // kube_upgrade_steps.py KubeUpgradeAbortStep (simplex only)
	StepQueryKubeVersions      = "query-kube-versions"
	StepQueryKubeUpgrade       = "query-kube-upgrade"
	StepQueryKubeHostUpgrade   = "query-kube-host-upgrade"
	StepKubeCleanupAborted     = "kube-upgrade-cleanup-aborted"
	StepKubeUpgradeStart       = "kube-upgrade-start"
	StepKubeDownloadImages     = "kube-upgrade-download-images"
	StepKubePreApplication     = "kube-pre-application-update"
	StepKubeNetworking         = "kube-upgrade-networking"
	StepKubeStorage            = "kube-upgrade-storage"
	StepKubeHostCordon         = "kube-host-cordon"
	StepKubeHostControlPlane   = "kube-host-upgrade-control-plane"
	StepKubeHostKubelet        = "kube-host-upgrade-kubelet"
	StepKubeHostUncordon       = "kube-host-uncordon"
	StepKubeUpgradeComplete    = "kube-upgrade-complete"
	StepKubePostApplication    = "kube-post-application-update"
	StepKubeUpgradeCleanup     = "kube-upgrade-cleanup"
	StepWaitKubeControlPlanePo = "wait-kube-control-plane-pods-ready"
)
