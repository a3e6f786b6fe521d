package starlingx

import "fmt"

// kubeBuildStages is the kube-upgrade build phase (KubeUpgradeStrategy.build).
func (s *System) kubeBuildStages() []Stage {
	return []Stage{{Name: StageKubeUpgradeQuery, abortable: true, Steps: []Step{
		s.newStep(StepQueryAlarms, effect{kind: effCheckAlarms}),
		s.newStep(StepQueryKubeVersions, effect{kind: effCheckKubeVersions}),
		s.newStep(StepQueryKubeUpgrade, effect{kind: effCheckKubeUpgrade}),
		s.newStep(StepKubeCleanupAborted, effect{kind: effCleanupAborted}),
		s.newStep(StepQueryKubeHostUpgrade, effect{}),
	}}}
}

// kubeStateOrder ranks kube_upgrade states so a re-created strategy skips
// the stages already done (KubeUpgradeStages._build_kube_upgrade_stages
// RESUME_STATE).
var kubeStateOrder = []string{
	KubeUpgradeStarted, KubeUpgradeDownloadedImages, KubeUpgradePreUpdatedApps,
	KubeUpgradeUpgradedNetwork, KubeUpgradeUpgradedStorage, KubeUpgradeCordonComplete,
	KubeUpgradeFirstMaster, KubeUpgradeSecondMaster, KubeUpgradeUpgradingKubelets,
	KubeUpgradeUncordonComplete, KubeUpgradeComplete, KubeUpgradePostUpdatedApps,
}

func kubeStateRank(state string) int {
	for i, st := range kubeStateOrder {
		if st == state {
			return i
		}
	}
	// A step in progress or failed (transient.go) resumes at that step.
	for done, p := range kubeInProgress {
		if p[0] == state || p[1] == state {
			return kubeStateRank(done) - 1
		}
	}
	return -1
}

// planKubeUpgrade builds the apply phase of a kube-upgrade strategy:
// start, download images, pre-application update, networking, storage,
// (simplex: cordon), per version hop the control planes, the kubelets,
// (simplex: uncordon), complete, post-application update, cleanup.
func (s *System) planKubeUpgrade(st *Strategy) ([]Stage, string) {
	to := st.Request.ToVersion
	hops, reason := s.kubeHops(to)
	if reason != "" {
		return nil, reason
	}
	if reason := s.kubeAlarmIssue(st.Request.AlarmRestrictions); reason != "" {
		return nil, reason
	}
	reached := -1
	if s.kubeUpgrade != nil {
		reached = kubeStateRank(s.kubeUpgrade.State)
	}
	var stages []Stage
	add := func(stage, step, state string, abortable bool, eff effect, hosts ...*Host) {
		if kubeStateRank(state) > reached {
			stages = append(stages, Stage{Name: stage, abortable: abortable, doneState: state,
				Steps: []Step{s.newStep(step, eff, hosts...)}})
		}
	}
	add(StageKubeUpgradeStart, StepKubeUpgradeStart, KubeUpgradeStarted, true, effect{kind: effKubeStart, version: to})
	kubeSetup(add)
	simplex := !s.cfg.Mode.IsDuplex()
	c0 := s.host(Controller0)
	if simplex {
		add(StageKubeHostCordon, StepKubeHostCordon, KubeUpgradeCordonComplete, true,
			effect{kind: effKubeState, state: KubeUpgradeCordonComplete}, c0)
	}
	stages = append(stages, s.kubeHostStages(hops, to)...)
	if simplex {
		add(StageKubeHostUncordon, StepKubeHostUncordon, KubeUpgradeUncordonComplete, true,
			effect{kind: effKubeState, state: KubeUpgradeUncordonComplete}, c0)
	}
	add(StageKubeUpgradeComplete, StepKubeUpgradeComplete, KubeUpgradeComplete, false,
		effect{kind: effKubeState, state: KubeUpgradeComplete})
	add(StageKubePostApplication, StepKubePostApplication, KubeUpgradePostUpdatedApps, false,
		effect{kind: effKubeState, state: KubeUpgradePostUpdatedApps})
	stages = append(stages, Stage{Name: StageKubeUpgradeCleanup, abortable: false,
		Steps: []Step{s.newStep(StepKubeUpgradeCleanup, effect{kind: effKubeCleanup})}})
	return stages, ""
}

// kubeSetup adds download images, pre-application update, networking (not
// abortable) and storage.
func kubeSetup(add func(stage, step, state string, abortable bool, eff effect, hosts ...*Host)) {
	for _, x := range []struct {
		name, state string
		abortable   bool
	}{
		{StageKubeDownloadImages, KubeUpgradeDownloadedImages, true},
		{StageKubePreApplication, KubeUpgradePreUpdatedApps, true},
		{StageKubeNetworking, KubeUpgradeUpgradedNetwork, false},
		{StageKubeStorage, KubeUpgradeUpgradedStorage, true},
	} {
		add(x.name, x.name, x.state, x.abortable, effect{kind: effKubeState, state: x.state})
	}
}

// kubeHostStages upgrades the control planes for each version hop (first
// host: controller-1 on duplex, controller-0 on simplex; second host:
// controller-0 on duplex), then the kubelets to the target in the order
// controller-1, controller-0, workers, skipping hosts already there
// (_add_kube_update_stages, _add_kube_upgrade_kubelets_stage).
func (s *System) kubeHostStages(hops []string, to string) []Stage {
	duplex := s.cfg.Mode.IsDuplex()
	first, second := s.host(Controller0), (*Host)(nil)
	if duplex {
		first, second = s.host(Controller1), s.host(Controller0)
	}
	var stages []Stage
	cp := func(stage string, h *Host, v, state string) {
		if h.ControlPlaneVersion == v || kubeLess(v, h.ControlPlaneVersion) {
			return
		}
		stages = append(stages, Stage{Name: stage + " " + v, abortable: true, Steps: []Step{
			s.newStep(StepKubeHostControlPlane, effect{kind: effControlPlane, hosts: names(h), version: v, state: state}, h)}})
	}
	for _, v := range hops {
		cp(StageKubeFirstControlPlane, first, v, KubeUpgradeFirstMaster)
		if second != nil {
			cp(StageKubeSecondControlPlane, second, v, KubeUpgradeSecondMaster)
		}
	}
	p := &hostPlan{s: s, active: s.activeController().Hostname}
	order := append([]*Host{s.host(Controller1), s.host(Controller0)}, s.workers()...)
	for _, h := range order {
		if h == nil || h.KubeletVersion == to {
			continue
		}
		act := s.newStep(StepKubeHostKubelet, effect{kind: effKubelet, hosts: names(h), version: to}, h)
		stages = append(stages, p.hostStage(StageKubeKubelet+" "+to, []*Host{h}, act, duplex))
	}
	return stages
}

// kubeHops is the list of versions the control planes step through: on
// duplex exactly the target, one minor version above the running one; on
// simplex the highest known version of every intermediate minor, then the
// target. Each hop must list the previous one in upgrade_from when it has
// an upgrade_from list.
func (s *System) kubeHops(to string) ([]string, string) {
	from := s.activeKube()
	if s.kubeUpgrade != nil && s.kubeUpgrade.ToVersion == to {
		from = s.kubeUpgrade.FromVersion
	}
	fv, err1 := parseKubeVersion(from)
	tv, err2 := parseKubeVersion(to)
	if err1 != nil || err2 != nil || !fv.less(tv) {
		return nil, fmt.Sprintf("Invalid to_version value: '%s'", to)
	}
	if tv.major != fv.major {
		return nil, fmt.Sprintf("cannot upgrade kubernetes across major versions (%s to %s)", from, to)
	}
	if s.cfg.Mode.IsDuplex() && tv.minor-fv.minor > 1 {
		return nil, fmt.Sprintf("duplex systems upgrade kubernetes one minor version per strategy: %s to %s crosses %d minor versions; upgrade to an intermediate version first",
			from, to, tv.minor-fv.minor)
	}
	hops := s.intermediateMinors(fv, tv)
	hops = append(hops, to)
	prev := from
	for _, h := range hops {
		if k := s.kubeVersion(h); k != nil && len(k.UpgradeFrom) > 0 && !contains(k.UpgradeFrom, prev) {
			return nil, fmt.Sprintf("kubernetes version %s cannot be upgraded to from %s (its upgrade_from is %v)", h, prev, k.UpgradeFrom)
		}
		prev = h
	}
	return hops, ""
}

// intermediateMinors picks, for each minor strictly between from and to,
// the highest known version of that minor.
func (s *System) intermediateMinors(from, to kubeVer) []string {
	var hops []string
	for m := from.minor + 1; m < to.minor; m++ {
		best := ""
		for _, k := range s.kubes {
			v, err := parseKubeVersion(k.Version)
			if err == nil && v.major == to.major && v.minor == m && (best == "" || kubeLess(best, k.Version)) {
				best = k.Version
			}
		}
		if best != "" {
			hops = append(hops, best)
		}
	}
	return hops
}
