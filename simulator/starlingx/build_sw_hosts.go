package starlingx

import "strings"

// swHostStages plans the deploy-host stages (SwUpgradeStrategy
// _add_upgrade_hosts_stages): controllers one at a time, then workers
// serially or in batches of max-parallel-worker-hosts; hosts already running
// the target are skipped. Standard controllers take the controller path
// (UpdateControllerHostsMixin._add_update_controller_strategy_stages), where
// a parallel controller apply type fails the build. All-in-one controllers
// have the worker personality, so the real VIM builds them with the worker
// path instead (_add_upgrade_hosts_stages: "We need to use this strategy on
// AIO type"): the controller apply type is never read, each controller gets
// its own stage (_create_worker_host_lists puts controllers in lists of
// one, serial or parallel), and a worker apply type of ignore leaves them
// out.
func (s *System) swHostStages(p *hostPlan, st *Strategy, target *Release, major bool) ([]Stage, string) {
	req := st.Request
	var stages []Stage
	ctrls := pendingHosts(target.ID, s.controllers())
	ctrlType := req.ControllerApplyType
	if s.aioControllers() {
		ctrlType = req.WorkerApplyType
		if ctrlType == ApplyParallel {
			ctrlType = ApplySerial // controllers stay in lists of one
		}
	}
	if len(ctrls) > 0 && ctrlType != ApplyIgnore {
		if ctrlType == ApplyParallel {
			return nil, "parallel apply type not allowed for controllers"
		}
		for _, h := range s.orderControllers(ctrls, major, p.active) {
			act := s.newStep(StepUpgradeHosts, effect{kind: effUpgradeHost, hosts: names(h)}, h)
			stages = append(stages, s.controllerStage(p, h, act, target.RebootRequired))
		}
	}
	for _, batch := range workerBatches(pendingHosts(target.ID, s.workers()), req) {
		act := s.newStep(StepUpgradeHosts, effect{kind: effUpgradeHost, hosts: names(batch...)}, batch...)
		stages = append(stages, p.hostStage(StageSwUpgradeWorkers, batch, act, target.RebootRequired))
	}
	return stages, ""
}

// aioControllers reports whether the controllers have the worker
// subfunction (All-in-one): the VIM's host personality list then holds
// "worker" too (nfv-vim objects/_host.py personality from subfunctions).
func (s *System) aioControllers() bool {
	for _, h := range s.controllers() {
		if strings.Contains(h.Subfunctions, PersonalityWorker) {
			return true
		}
	}
	return false
}

func pendingHosts(release string, hosts []*Host) []*Host {
	var out []*Host
	for _, h := range hosts {
		if h.SoftwareRelease != release {
			out = append(out, h)
		}
	}
	return out
}

// orderControllers puts controller-1 first for a duplex major release and
// otherwise the controller that will not be active first.
func (s *System) orderControllers(ctrls []*Host, major bool, active string) []*Host {
	if len(ctrls) < 2 {
		return ctrls
	}
	first := Controller1
	if !major {
		first = otherController(active)
	}
	if ctrls[0].Hostname != first {
		ctrls[0], ctrls[1] = ctrls[1], ctrls[0]
	}
	return ctrls
}

// workerBatches groups workers per the worker apply type.
func workerBatches(workers []*Host, req CreateRequest) [][]*Host {
	size := 1
	switch req.WorkerApplyType {
	case ApplyIgnore:
		return nil
	case ApplyParallel:
		size = req.MaxParallelWorkerHosts
		if size < 2 {
			size = 2
		}
	}
	var out [][]*Host
	for len(workers) > 0 {
		n := min(size, len(workers))
		out = append(out, workers[:n])
		workers = workers[n:]
	}
	return out
}

func isSwHostStage(name string) bool {
	return name == StageSwUpgradeControllers || name == StageSwUpgradeWorkers || name == StageSwUpgradeStorage
}
