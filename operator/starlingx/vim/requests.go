package vim

// ApplyType is controller-/storage-/worker-apply-type.
type ApplyType string

// Apply types.
const (
	ApplySerial   ApplyType = "serial"
	ApplyParallel ApplyType = "parallel"
	ApplyIgnore   ApplyType = "ignore"
)

// SwUpgradeRequest creates a sw-upgrade (sw-deploy) strategy
// (SwUpgradeStrategyCreateData). Empty apply types default to serial, the
// instance action to stop-start and alarm restrictions to strict. Set
// Delete so the strategy ends with sw-deploy-delete: without it the next
// sw-upgrade build fails "Software deployment is already complete,
// pending delete".
type SwUpgradeRequest struct {
	Releases               []string  `json:"release"`
	ControllerApplyType    ApplyType `json:"controller-apply-type"`
	StorageApplyType       ApplyType `json:"storage-apply-type"`
	WorkerApplyType        ApplyType `json:"worker-apply-type"`
	MaxParallelWorkerHosts int       `json:"max-parallel-worker-hosts,omitempty"` // 2..10
	DefaultInstanceAction  string    `json:"default-instance-action"`             // stop-start | migrate
	AlarmRestrictions      string    `json:"alarm-restrictions"`                  // strict | relaxed | permissive
	Rollback               bool      `json:"rollback"`
	Delete                 bool      `json:"delete"`
	Snapshot               bool      `json:"snapshot,omitempty"`
	Cleanup                bool      `json:"cleanup,omitempty"`
	PreUpgradeDeploy       bool      `json:"pre-upgrade-deploy,omitempty"`
	KubeUpgrade            string    `json:"kube-upgrade,omitempty"`
}

// KubeUpgradeRequest creates a kube-upgrade strategy
// (KubeUpgradeStrategyCreateData); ToVersion is mandatory.
//
// ControllerApplyType must be serial: the real VIM refuses anything else
// with 400 "controller-apply-type must be 'serial' for kube-upgrade"
// (starlingx/nfv _sw_update_strategy.py KubeUpgradeStrategyAPI.post).
// ToVersion is sent as given; the VIM lower-cases it and adds a leading
// "v" when missing (same function).
type KubeUpgradeRequest struct {
	ToVersion              string    `json:"to-version"`
	ControllerApplyType    ApplyType `json:"controller-apply-type,omitempty"`
	StorageApplyType       ApplyType `json:"storage-apply-type"`
	WorkerApplyType        ApplyType `json:"worker-apply-type"`
	MaxParallelWorkerHosts int       `json:"max-parallel-worker-hosts,omitempty"`
	DefaultInstanceAction  string    `json:"default-instance-action"`
	AlarmRestrictions      string    `json:"alarm-restrictions"`
}

func (r *SwUpgradeRequest) defaults() {
	applyDefaults(&r.ControllerApplyType, &r.StorageApplyType, &r.WorkerApplyType, &r.DefaultInstanceAction, &r.AlarmRestrictions)
}

func (r *KubeUpgradeRequest) defaults() {
	applyDefaults(&r.ControllerApplyType, &r.StorageApplyType, &r.WorkerApplyType, &r.DefaultInstanceAction, &r.AlarmRestrictions)
}

func applyDefaults(ctrl, storage, worker *ApplyType, action, alarms *string) {
	for _, t := range []*ApplyType{ctrl, storage, worker} {
		if *t == "" {
			*t = ApplySerial
		}
	}
	if *action == "" {
		*action = "stop-start"
	}
	if *alarms == "" {
		*alarms = "strict"
	}
}

// actionRequest is the body of POST .../strategy/actions.
type actionRequest struct {
	Action  string `json:"action"` // apply-all, apply-stage, abort, abort-stage
	StageID *int   `json:"stage-id,omitempty"`
}

// strategyEnvelope is {"strategy": {...} | null}.
type strategyEnvelope struct {
	Strategy *Strategy `json:"strategy"`
}

type currentEnvelope struct {
	Strategy *CurrentStrategy `json:"strategy"`
}
