package starlingx

import (
	"fmt"
	"sort"
)

// planSwRollback builds the apply phase of a sw-upgrade strategy created
// with "rollback": true (nfv-vim strategy/_strategy.py SwUpgradeStrategy
// _build_complete_rollback): the release is the deploy's to-release (the
// build's query-upgrade has no release, so the VIM reads the deploy), which
// must be deploying and past "start". Stages: sw-upgrade-rollback-start
// (query-alarms, sw-deploy-abort, sw-deploy-activate-rollback), one stage
// per host that runs the release (workers, then controllers: controller-0
// first on a major release, else the active controller last;
// _add_rollback_hosts_stages), then sw-upgrade-rollback-complete
// (query-alarms, the major release's swact to controller-0, deploy-delete).
// A deploy that only started (start-done, start-failed) is deleted before
// the (then empty) host stages.
func (s *System) planSwRollback(st *Strategy) ([]Stage, string) {
	d := s.deploy
	if d == nil || s.release(d.toID) == nil {
		return nil, "Software release does not exist or is unavailable"
	}
	target := s.release(d.toID)
	st.ReleaseID = target.ID
	switch {
	case target.State != ReleaseDeploying:
		return nil, fmt.Sprintf("Software release must be deploying for a rollback, found=%s (%s)", target.ID, target.State)
	case d.State == DeployStart:
		return nil, "Software rollback cannot be initiated while sw-deploy-start is in progress"
	}
	major := !mustID(d.toID).sameMajor(mustID(d.fromID))
	p := &hostPlan{s: s, active: s.activeController().Hostname}
	start := Stage{Name: StageSwUpgradeRollbackStart, abortable: true, Steps: []Step{
		s.newStep(StepQueryAlarms, effect{kind: effCheckAlarms}),
		s.newStep(StepSwDeployAbort, effect{kind: effDeployAbort}),
		s.newStep(StepSwDeployActivateRbk, effect{kind: effActivateRollback}),
	}}
	steps := []Step{s.newStep(StepQueryAlarms, effect{kind: effCheckAlarms})}
	steps = append(steps, s.swactFix(p, major)...)
	steps = append(steps, s.newStep(StepDeployDelete, effect{kind: effDeployDelete}))
	complete := Stage{Name: StageSwUpgradeRollbackComplete, abortable: true, Steps: steps}
	if d.State == DeployStartDone || d.State == DeployStartFailed {
		return []Stage{start, complete}, ""
	}
	stages := []Stage{start}
	stages = append(stages, s.rollbackHostStages(p, target, major)...)
	return append(stages, complete), ""
}

// rollbackHostStages rolls back every host that runs the release: workers
// one at a time, then the controllers.
func (s *System) rollbackHostStages(p *hostPlan, target *Release, major bool) []Stage {
	var stages []Stage
	for _, h := range s.workers() {
		if h.SoftwareRelease == target.ID {
			act := s.newStep(StepUpgradeHosts, effect{kind: effRollbackHost, hosts: names(h)}, h)
			stages = append(stages, p.hostStage(StageSwUpgradeWorkers, []*Host{h}, act, target.RebootRequired))
		}
	}
	var ctrls []*Host
	for _, h := range s.controllers() {
		if h.SoftwareRelease == target.ID {
			ctrls = append(ctrls, h)
		}
	}
	last := p.active
	if major {
		last = Controller1
	}
	sort.SliceStable(ctrls, func(i, j int) bool { return ctrls[i].Hostname != last && ctrls[j].Hostname == last })
	for _, h := range ctrls {
		act := s.newStep(StepUpgradeHosts, effect{kind: effRollbackHost, hosts: names(h)}, h)
		stages = append(stages, s.controllerStage(p, h, act, target.RebootRequired))
	}
	return stages
}

// controllerStage is a controller's host stage. The VIM refuses to abort
// it: sw-upgrade-controllers stages are created with is_abortable=False
// (SwDeployControllerHostsMixin), and so is an All-in-one controller's
// sw-upgrade-worker-hosts stage when it reboots (UpdateWorkerHostsMixin:
// "the abort needs to be blocked in the sw-upgrade-workers stage").
func (s *System) controllerStage(p *hostPlan, h *Host, act Step, reboot bool) Stage {
	name := StageSwUpgradeControllers
	aio := s.aioControllers()
	if aio {
		name = StageSwUpgradeWorkers // AIO controllers use the worker stages
	}
	sg := p.hostStage(name, []*Host{h}, act, reboot)
	sg.abortable = aio && !reboot
	return sg
}
