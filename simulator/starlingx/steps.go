package starlingx

// effectKind is what completing a step does to the system (effects.go).
type effectKind int

const (
	effNone effectKind = iota
	effCheckAlarms
	effPrecheck
	effCheckKubeVersions
	effCheckKubeUpgrade
	effCleanupAborted
	effSwact
	effLock
	effUnlock
	effStartDeploy
	effUpgradeHost
	effActivate
	effComplete
	effDeployDelete
	effKubeStart
	effKubeState
	effControlPlane
	effKubelet
	effKubeCleanup
	effDeployAbort
	effActivateRollback
	effRollbackHost
	effKubeAbort
)

// effect is a step's action with its arguments.
type effect struct {
	kind    effectKind
	hosts   []string // hostnames for host effects
	version string   // Kubernetes version for kube effects
	state   string   // kube_upgrade state reached by effKubeState
}

// newStep builds a step named name acting on hosts, with the VIM's timeout
// and the model's duration for that name.
func (s *System) newStep(name string, eff effect, hosts ...*Host) Step {
	sp := Step{Name: name, Timeout: stepTimeout(name), duration: s.stepDuration(name), effect: eff}
	if len(hosts) > 0 {
		sp.EntityType = "hosts"
	}
	for _, h := range hosts {
		sp.EntityNames = append(sp.EntityNames, h.Hostname)
		sp.EntityUUIDs = append(sp.EntityUUIDs, h.UUID)
	}
	return sp
}

// hostPlan tracks, while stages are planned, which controller will be
// active when each stage runs, so swact-hosts steps go where the VIM puts
// them (it plans from the host table at build time too).
type hostPlan struct {
	s      *System
	active string
}

// swact adds a swact-hosts step away from h when h will be active, as the
// VIM's _swact_fix and host stage mixins do; on simplex it adds nothing.
func (p *hostPlan) swact(steps []Step, h *Host) []Step {
	if !p.s.cfg.Mode.IsDuplex() || !h.isController() {
		return steps
	}
	steps = append(steps, p.s.newStep(StepSwactHosts, effect{kind: effSwact, hosts: names(h)}, h))
	if p.active == h.Hostname {
		p.active = otherController(h.Hostname)
	}
	return steps
}

// hostStage is the stage of one host, or of a batch of workers: with
// reboot, swact away from a controller that will be active, lock, act,
// stabilize, unlock and wait for alarms; without, act and stabilize
// (nfv-vim _strategy.py UpdateControllerHostsMixin / UpdateWorkerHostsMixin).
func (p *hostPlan) hostStage(name string, hosts []*Host, action Step, reboot bool) Stage {
	var steps []Step
	if reboot {
		if len(hosts) == 1 && p.active == hosts[0].Hostname {
			steps = p.swact(steps, hosts[0])
		}
		steps = append(steps, p.s.newStep(StepLockHosts, effect{kind: effLock, hosts: names(hosts...)}, hosts...))
	}
	steps = append(steps, action)
	steps = append(steps, p.s.newStep(StepSystemStabilize, effect{}))
	if reboot {
		steps = append(steps, p.s.newStep(StepUnlockHosts, effect{kind: effUnlock, hosts: names(hosts...)}, hosts...))
		steps = append(steps, p.s.newStep(StepWaitAlarmsClear, effect{}))
	}
	return Stage{Name: name, Steps: steps, abortable: true}
}

func names(hosts ...*Host) []string {
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = h.Hostname
	}
	return out
}

func otherController(name string) string {
	if name == Controller0 {
		return Controller1
	}
	return Controller0
}
