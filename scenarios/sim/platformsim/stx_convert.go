package platformsim

import (
	"time"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// vimDate is the VIM's "%Y-%m-%d %H:%M:%S", model time in UTC.
func vimDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// toStrategy renders a model strategy as the VIM's JSON decodes.
func toStrategy(st starlingx.Strategy) *vim.Strategy {
	req := st.Request
	out := &vim.Strategy{
		UUID: st.UUID, Name: vim.StrategyType(st.Type),
		ControllerApplyType: string(req.ControllerApplyType), StorageApplyType: string(req.StorageApplyType),
		SwiftApplyType: string(starlingx.ApplyIgnore), WorkerApplyType: string(req.WorkerApplyType),
		MaxParallelWorkerHosts: req.MaxParallelWorkerHosts, DefaultInstanceAction: req.DefaultInstanceAction,
		AlarmRestrictions: req.AlarmRestrictions, State: vim.StrategyState(st.State), CurrentPhase: string(st.CurrentPhase),
		CurrentPhaseCompletionPercentage: st.CurrentPhaseCompletion(),
		BuildPhase:                       toPhase(st.Build), ApplyPhase: toPhase(st.Apply), AbortPhase: toPhase(st.Abort),
	}
	if st.Type == starlingx.SwUpgrade {
		out.Release = append(vim.ReleaseList{}, req.Releases...)
		out.KubeVersion = req.KubeUpgrade
		out.ReleaseID = st.ReleaseID
	}
	return out
}

func toPhase(p starlingx.Phase) vim.Phase {
	out := vim.Phase{PhaseName: string(p.Name), Timeout: int(p.Timeout / time.Second), TotalStages: len(p.Stages),
		CurrentStage: p.CurrentStage, StopAtStage: p.StopAtStage, InProgress: p.InProgress,
		CompletionPercentage: p.CompletionPercentage(), Result: string(p.Result), Reason: p.Reason, Response: p.Response,
		StartDateTime: vimDate(p.Start), EndDateTime: vimDate(p.End), Stages: []vim.Stage{}}
	for _, st := range p.Stages {
		stage := vim.Stage{StageID: st.ID, StageName: st.Name, Timeout: int(st.Timeout / time.Second), TotalSteps: len(st.Steps),
			CurrentStep: st.CurrentStep, InProgress: st.InProgress, Result: string(st.Result), Reason: st.Reason,
			StartDateTime: vimDate(st.Start), EndDateTime: vimDate(st.End), Steps: []vim.Step{}}
		for _, sp := range st.Steps {
			stage.Steps = append(stage.Steps, vim.Step{StepID: sp.ID, StepName: sp.Name, Timeout: int(sp.Timeout / time.Second),
				EntityType: sp.EntityType, EntityUUIDs: nonNil(sp.EntityUUIDs), EntityNames: nonNil(sp.EntityNames),
				Result: string(sp.Result), Reason: sp.Reason, StartDateTime: vimDate(sp.Start), EndDateTime: vimDate(sp.End)})
		}
		out.Stages = append(out.Stages, stage)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return append([]string(nil), s...)
}
