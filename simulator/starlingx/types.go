package starlingx

// SystemMode is sysinv's isystem.system_mode (sysinv common/constants.py
// SYSTEM_MODE_*).
type SystemMode string

// System modes.
const (
	Simplex      SystemMode = "simplex"
	Duplex       SystemMode = "duplex"
	DuplexDirect SystemMode = "duplex-direct"
)

// IsDuplex reports whether the system has two controllers.
func (m SystemMode) IsDuplex() bool { return m == Duplex || m == DuplexDirect }

// StrategyType is the VIM's strategy name as it appears in the URL
// (/api/orchestration/{type}/strategy) and in the strategy's "name" field.
type StrategyType string

// Strategy types modelled. The CLI's "sw-deploy-strategy" is "sw-upgrade" on
// the wire (nfv-client sw_update.py STRATEGY_NAME_SW_UPGRADE).
const (
	SwUpgrade   StrategyType = "sw-upgrade"
	KubeUpgrade StrategyType = "kube-upgrade"
)

// StrategyState mirrors nfv_common/strategy STRATEGY_STATE.
type StrategyState string

// Strategy states.
const (
	StateInitial      StrategyState = "initial"
	StateBuilding     StrategyState = "building"
	StateBuildFailed  StrategyState = "build-failed"
	StateBuildTimeout StrategyState = "build-timeout"
	StateReadyToApply StrategyState = "ready-to-apply"
	StateApplying     StrategyState = "applying"
	StateApplyFailed  StrategyState = "apply-failed"
	StateApplyTimeout StrategyState = "apply-timeout"
	StateApplied      StrategyState = "applied"
	StateAborting     StrategyState = "aborting"
	StateAbortFailed  StrategyState = "abort-failed"
	StateAbortTimeout StrategyState = "abort-timeout"
	StateAborted      StrategyState = "aborted"
)

// PhaseName mirrors STRATEGY_PHASE.
type PhaseName string

// Phases.
const (
	PhaseInitial PhaseName = "initial"
	PhaseBuild   PhaseName = "build"
	PhaseApply   PhaseName = "apply"
	PhaseAbort   PhaseName = "abort"
)

// Result is a phase, stage or step result (STRATEGY_RESULT and friends).
type Result string

// Results.
const (
	ResultInitial    Result = "initial"
	ResultInProgress Result = "inprogress"
	ResultWait       Result = "wait"
	ResultSuccess    Result = "success"
	ResultDegraded   Result = "degraded"
	ResultFailed     Result = "failed"
	ResultTimedOut   Result = "timed-out"
	ResultAborted    Result = "aborted"
)

// done reports whether r ends a step, stage or phase.
func (r Result) done() bool {
	switch r {
	case ResultSuccess, ResultDegraded, ResultFailed, ResultTimedOut, ResultAborted:
		return true
	}
	return false
}

// ApplyType is controller-/storage-/worker-apply-type.
type ApplyType string

// Apply types (nfv-vim api sw_update _sw_update_defs.py SW_UPDATE_APPLY_TYPE).
const (
	ApplySerial   ApplyType = "serial"
	ApplyParallel ApplyType = "parallel"
	ApplyIgnore   ApplyType = "ignore"
)

// Alarm restriction types (SW_UPDATE_ALARM_RESTRICTION_TYPES).
const (
	AlarmsStrict     = "strict"
	AlarmsRelaxed    = "relaxed"
	AlarmsPermissive = "permissive"
)

// Instance actions (SW_UPDATE_INSTANCE_ACTION).
const (
	InstanceStopStart = "stop-start"
	InstanceMigrate   = "migrate"
)

// Release states (starlingx/update software/states.py).
const (
	ReleaseUploading    = "uploading"
	ReleaseUploadFailed = "upload-failed"
	ReleaseAvailable    = "available"
	ReleaseUnavailable  = "unavailable"
	ReleaseDeploying    = "deploying"
	ReleaseDeployed     = "deployed"
	ReleaseRemoving     = "removing"
	ReleaseCommitted    = "committed"
)

// USM deploy states (states.py DEPLOY_STATES).
const (
	DeployStart          = "start"
	DeployStartDone      = "start-done"
	DeployStartFailed    = "start-failed"
	DeployHost           = "host"
	DeployHostDone       = "host-done"
	DeployHostFailed     = "host-failed"
	DeployActivate       = "activate"
	DeployActivateDone   = "activate-done"
	DeployActivateFailed = "activate-failed"
	DeployCompleted      = "completed"

	// Rollback states: software_controller.py software_deploy_abort_api
	// moves a deploy to host-rollback (before activate) or
	// activate-rollback-pending (activate-done, activate-failed,
	// completed) through deploy_state.py DeployState.abort;
	// software_deploy_activate_rollback_api walks activate-rollback →
	// activate-rollback-done; software_deploy_host_rollback_api then rolls
	// the hosts back (host-rollback → host-rollback-done, via
	// DeployState.deploy_host and deploy_host_done).
	DeployHostRollback            = "host-rollback"
	DeployHostRollbackDone        = "host-rollback-done"
	DeployHostRollbackFailed      = "host-rollback-failed"
	DeployActivateRollback        = "activate-rollback"
	DeployActivateRollbackDone    = "activate-rollback-done"
	DeployActivateRollbackFailed  = "activate-rollback-failed"
	DeployActivateRollbackPending = "activate-rollback-pending"
)

// Kubernetes version states (sysinv common/kubernetes.py KUBE_STATE_*).
const (
	KubeActive      = "active"
	KubeAvailable   = "available"
	KubePartial     = "partial"
	KubeUnavailable = "unavailable"
)

// sysinv kube_upgrade states (common/kubernetes.py KUBE_UPGRADE_*), in the
// order a kube-upgrade strategy walks them.
const (
	KubeUpgradeStarted           = "upgrade-started"
	KubeUpgradeDownloadedImages  = "downloaded-images"
	KubeUpgradePreUpdatedApps    = "pre-updated-apps"
	KubeUpgradeUpgradedNetwork   = "upgraded-networking"
	KubeUpgradeUpgradedStorage   = "upgraded-storage"
	KubeUpgradeCordonComplete    = "cordon-complete"
	KubeUpgradeFirstMaster       = "upgraded-first-master"
	KubeUpgradeSecondMaster      = "upgraded-second-master"
	KubeUpgradeUpgradingKubelets = "upgrading-kubelets"
	KubeUpgradeUncordonComplete  = "uncordon-complete"
	KubeUpgradeComplete          = "upgrade-complete"
	KubeUpgradePostUpdatedApps   = "post-updated-apps"
	KubeUpgradeAborted           = "upgrade-aborted"
	// KubeUpgradeAborting is set by sysinv's kube_upgrade.py
	// KubeUpgradeController.patch (state upgrade-aborting) once a control
	// plane moved; the conductor's kube_upgrade_abort restores the
	// from_version and ends upgrade-aborted or upgrade-aborting-failed.
	KubeUpgradeAborting       = "upgrade-aborting"
	KubeUpgradeAbortingFailed = "upgrade-aborting-failed"
)

// Host personalities and controller names.
const (
	PersonalityController = "controller"
	PersonalityWorker     = "worker"
	Controller0           = "controller-0"
	Controller1           = "controller-1"
)
