package fakevim

import (
	"time"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// vimTime is the VIM's date form (nfv_common strategy: strftime
// "%Y-%m-%d %H:%M:%S"); fakevim writes model time in UTC.
const vimTime = "2006-01-02 15:04:05"

func vimDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(vimTime)
}

// strategyJSON renders a strategy as SwUpdateStrategyQueryData.convert_strategy
// does: sw-upgrade strategies carry "release" (a list), "kube-version" and,
// once built, "release-id"; kube-upgrade strategies carry neither.
func strategyJSON(st starlingx.Strategy) map[string]any {
	req := st.Request
	m := map[string]any{
		"uuid": st.UUID, "name": st.Type,
		"controller-apply-type": req.ControllerApplyType, "storage-apply-type": req.StorageApplyType,
		"swift-apply-type": starlingx.ApplyIgnore, "worker-apply-type": req.WorkerApplyType,
		"max-parallel-worker-hosts": req.MaxParallelWorkerHosts, "default-instance-action": req.DefaultInstanceAction,
		"alarm-restrictions": req.AlarmRestrictions,
		"state":              st.State, "current-phase": st.CurrentPhase,
		"current-phase-completion-percentage": st.CurrentPhaseCompletion(),
		"build-phase":                         phaseJSON(st.Build), "apply-phase": phaseJSON(st.Apply), "abort-phase": phaseJSON(st.Abort),
	}
	if st.Type == starlingx.SwUpgrade {
		m["release"] = append([]string{}, req.Releases...)
		m["kube-version"] = nil
		if req.KubeUpgrade != "" {
			m["kube-version"] = req.KubeUpgrade
		}
		if st.ReleaseID != "" {
			m["release-id"] = st.ReleaseID
			m["pre-upgrade-deploy"] = req.PreUpgradeDeploy
			m["metapackages"] = []string{}
		}
	}
	return m
}

func phaseJSON(p starlingx.Phase) map[string]any {
	stages := make([]map[string]any, 0, len(p.Stages))
	for _, st := range p.Stages {
		stages = append(stages, stageJSON(st))
	}
	return map[string]any{
		"phase-name": p.Name, "timeout": seconds(p.Timeout), "total-stages": len(p.Stages),
		"current-stage": p.CurrentStage, "stop-at-stage": p.StopAtStage, "stages": stages,
		"inprogress": p.InProgress, "completion-percentage": p.CompletionPercentage(),
		"result": p.Result, "reason": p.Reason, "response": p.Response,
		"start-date-time": vimDate(p.Start), "end-date-time": vimDate(p.End),
	}
}

func stageJSON(st starlingx.Stage) map[string]any {
	steps := make([]map[string]any, 0, len(st.Steps))
	for _, sp := range st.Steps {
		steps = append(steps, map[string]any{
			"step-id": sp.ID, "step-name": sp.Name, "timeout": seconds(sp.Timeout),
			"entity-type": sp.EntityType, "entity-uuids": nonNil(sp.EntityUUIDs), "entity-names": nonNil(sp.EntityNames),
			"result": sp.Result, "reason": sp.Reason,
			"start-date-time": vimDate(sp.Start), "end-date-time": vimDate(sp.End),
		})
	}
	return map[string]any{
		"stage-id": st.ID, "stage-name": st.Name, "timeout": seconds(st.Timeout),
		"total-steps": len(st.Steps), "current-step": st.CurrentStep, "steps": steps,
		"inprogress": st.InProgress, "result": st.Result, "reason": st.Reason,
		"start-date-time": vimDate(st.Start), "end-date-time": vimDate(st.End),
	}
}

func seconds(d time.Duration) int { return int(d / time.Second) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
