package starlingx

// swBuildStages is the sw-upgrade build phase (SwUpgradeStrategy._build_normal;
// a rollback strategy's _build_rollback has no precheck).
func (s *System) swBuildStages(rollback bool) []Stage {
	if rollback {
		return []Stage{{Name: StageSwUpgradeQuery, abortable: true, Steps: []Step{
			s.newStep(StepQueryAlarms, effect{kind: effCheckAlarms}),
			s.newStep(StepQueryUpgrade, effect{}),
		}}}
	}
	return []Stage{{Name: StageSwUpgradeQuery, abortable: true, Steps: []Step{
		s.newStep(StepQueryAlarms, effect{kind: effCheckAlarms}),
		s.newStep(StepQueryUpgrade, effect{}),
		s.newStep(StepSwDeployPrecheck, effect{kind: effPrecheck}),
	}}}
}

// swUnmodelled refuses sw-upgrade requests the model does not implement,
// at create time as the VIM's build() does with its own combinations.
func swUnmodelled(req CreateRequest) string {
	switch {
	case len(req.Releases) > 0 && req.Rollback:
		return "Cannot set both release and rollback"
	case req.Rollback && req.Delete:
		return "Cannot set both delete and rollback, delete is set by default"
	case req.Rollback && req.Snapshot:
		return "Cannot set both snapshot and rollback, if snapshot is available it will be forcibly used."
	case req.Rollback && req.KubeUpgrade != "":
		return "Cannot set both kube_upgrade and rollback"
	case req.Cleanup:
		return "cleanup is not modelled by this system model"
	case req.KubeUpgrade != "":
		return "a combined sw-upgrade with kube-upgrade is not modelled by this system model; create a kube-upgrade strategy after the sw-upgrade"
	case len(req.Releases) > 1 && !req.Rollback:
		return "this system model deploys one release per strategy; pass exactly one release"
	}
	return ""
}

// planSwUpgrade builds the apply phase of a sw-upgrade strategy from the
// live state, resuming a deploy already under way for the same release
// (SwUpgradeStrategy._build_complete_normal).
func (s *System) planSwUpgrade(st *Strategy) ([]Stage, string) {
	target := s.swTarget(st)
	if target == nil {
		return nil, "Software release does not exist or is unavailable"
	}
	st.ReleaseID = target.ID
	d := s.deploy
	if d != nil && d.State == DeployCompleted && !st.Request.Delete {
		return nil, "Software deployment is already complete, pending delete"
	}
	doStart := d == nil || d.State == DeployStartFailed
	doHosts := d == nil || d.State != DeployActivateDone && d.State != DeployCompleted
	doComplete := d == nil || d.State != DeployCompleted
	doDelete := st.Request.Delete
	if d == nil && s.deployed == target.ID {
		doStart, doHosts, doComplete, doDelete = false, false, false, false
	}
	major := !mustID(target.ID).sameMajor(mustID(s.deployed))
	p := &hostPlan{s: s, active: s.activeController().Hostname}
	var stages []Stage
	if doStart {
		stages = append(stages, s.swStartStage(p, major))
	}
	if doHosts {
		hs, reason := s.swHostStages(p, st, target, major)
		if reason != "" {
			return nil, reason
		}
		stages = append(stages, hs...)
	}
	if doComplete {
		lastHost := len(stages) > 0 && isSwHostStage(stages[len(stages)-1].Name)
		stages = append(stages, s.swCompleteStage(p, major, target.RebootRequired || !lastHost))
	}
	if doDelete {
		stages = append(stages, s.swDeleteStage(p, major))
	}
	if len(stages) == 0 {
		return nil, "no sw-deployments patches need to be applied"
	}
	return stages, ""
}

func (s *System) swTarget(st *Strategy) *Release {
	if len(st.Request.Releases) != 1 {
		return nil
	}
	r := s.release(st.Request.Releases[0])
	if r == nil || r.State == ReleaseUnavailable || r.State == ReleaseUploading || r.State == ReleaseUploadFailed {
		return nil
	}
	return r
}

// swactFix adds the swact away from controller-1 that the VIM puts at the
// head of major-release stages on duplex systems (_swact_fix).
func (s *System) swactFix(p *hostPlan, major bool) []Step {
	if !major || !s.cfg.Mode.IsDuplex() {
		return nil
	}
	return p.swact(nil, s.host(Controller1))
}

func (s *System) swStartStage(p *hostPlan, major bool) Stage {
	steps := s.swactFix(p, major)
	steps = append(steps,
		s.newStep(StepStartUpgrade, effect{kind: effStartDeploy}),
		s.newStep(StepQueryAlarms, effect{}))
	return Stage{Name: StageSwUpgradeStart, Steps: steps, abortable: true}
}

func (s *System) swCompleteStage(p *hostPlan, major, skipStabilize bool) Stage {
	var steps []Step
	if !skipStabilize {
		steps = append(steps, s.newStep(StepSystemStabilize, effect{}))
	}
	steps = append(steps, s.swactFix(p, major)...)
	steps = append(steps,
		s.newStep(StepQueryAlarms, effect{}),
		s.newStep(StepActivateUpgrade, effect{kind: effActivate}),
		s.newStep(StepCompleteUpgrade, effect{kind: effComplete}),
		s.newStep(StepQueryAlarms, effect{}))
	return Stage{Name: StageSwUpgradeComplete, Steps: steps, abortable: true}
}

func (s *System) swDeleteStage(p *hostPlan, major bool) Stage {
	steps := s.swactFix(p, major)
	steps = append(steps, s.newStep(StepDeployDelete, effect{kind: effDeployDelete}))
	return Stage{Name: StageSwDeployDelete, Steps: steps, abortable: true}
}
