package starlingx

import (
	"fmt"
	"strings"
)

// runDeployEffect performs the USM side of sw-upgrade steps (software
// deploy start / host / activate / complete / delete, and the rollback
// strategy's abort / activate-rollback / host rollback). A non-empty
// return fails the step.
func (s *System) runDeployEffect(st *Strategy, e effect) string {
	switch e.kind {
	case effStartDeploy:
		s.startDeployDone()
	case effUpgradeHost:
		s.deployHosts(e.hosts)
	case effActivate:
		if p := pendingHosts(s.deploy.toID, s.hosts); len(p) > 0 {
			s.setDeployState(DeployActivateFailed)
			return fmt.Sprintf("deploy activate failed: hosts %v do not run %s yet; apply the strategy with them included", names(p...), s.deploy.toID)
		}
		s.setDeployState(DeployActivateDone)
	case effComplete:
		// software_deploy_complete_api: the deploy is completed; the
		// releases stay deploying until the deploy is deleted.
		s.setDeployState(DeployCompleted)
	case effDeployDelete:
		return s.deleteDeploy()
	case effDeployAbort:
		return s.abortDeploy()
	case effActivateRollback:
		s.activateRollback()
	case effRollbackHost:
		s.rollbackHosts(e.hosts)
	}
	return ""
}

// startDeploy is the beginning of "software deploy start"
// (software_deploy_start_api → DeployState.start): the deploy record
// exists in state "start" while the start runs, and the target and the
// older patches it brings along become deploying.
//
// A target older than the running release of the same major is a patch
// removal (software_controller.py _validate_releases_for_select: "target
// < highest" → remove; _get_metapackages_to_remove; software_deploy_start
// _api's remove branch): the newer deployed patches become removing
// (ReleaseState.start_remove), the target stays deployed, and the deploy
// runs from the running release to the target like any other.
func (s *System) startDeploy(st *Strategy) {
	target := s.release(st.ReleaseID)
	if mustID(target.ID).compare(mustID(s.deployed)) < 0 {
		s.startRemoval(target)
		return
	}
	together := s.deployedTogether(target)
	s.deploy = &Deploy{
		FromRelease: mustID(s.deployed).full, ToRelease: mustID(target.ID).full,
		FeedRepo: "/var/www/pages/feed/rel-" + mustID(target.ID).majorStr + "/ostree_repo",
		CommitID: fmt.Sprintf("%016x%016x%016x%016x", s.rng.Uint64(), s.rng.Uint64(), s.rng.Uint64(), s.rng.Uint64()), RebootRequired: target.RebootRequired,
		State: DeployStart, toID: target.ID, fromID: s.deployed, together: together, initialKube: s.activeKube(),
	}
	for _, id := range append(together, target.ID) {
		s.release(id).State = ReleaseDeploying
	}
	s.record(EventDeployState, target.ID, DeployStart)
}

func (s *System) startRemoval(target *Release) {
	tid := mustID(target.ID)
	var removing []string
	for i := range s.releases {
		r := &s.releases[i]
		id := mustID(r.ID)
		if id.sameMajor(tid) && tid.compare(id) < 0 && (r.State == ReleaseDeployed || r.State == ReleaseCommitted) {
			r.State = ReleaseRemoving
			removing = append(removing, r.ID)
		}
	}
	s.deploy = &Deploy{
		FromRelease: mustID(s.deployed).full, ToRelease: tid.full,
		FeedRepo: "/var/www/pages/feed/rel-" + tid.majorStr + "/ostree_repo",
		CommitID: fmt.Sprintf("%016x%016x%016x%016x", s.rng.Uint64(), s.rng.Uint64(), s.rng.Uint64(), s.rng.Uint64()), RebootRequired: s.release(s.deployed).RebootRequired,
		State: DeployStart, toID: target.ID, fromID: s.deployed, initialKube: s.activeKube(), removing: removing,
	}
	s.record(EventDeployState, target.ID, DeployStart)
}

// setDeployState moves the deploy to state, recording the change.
func (s *System) setDeployState(state string) {
	if s.deploy != nil && s.deploy.State != state {
		s.deploy.State = state
		s.record(EventDeployState, s.deploy.toID, state)
	}
}

// startDeployDone ends the start: start-done (DeployState.start_done).
func (s *System) startDeployDone() {
	if s.deploy != nil && s.deploy.State == DeployStart {
		s.setDeployState(DeployStartDone)
	}
}

// deployHosts ends "software deploy host" on hosts: they run the target;
// the deploy is host-done once every host does (DeployState.host_deploy_updated).
func (s *System) deployHosts(hosts []string) {
	for _, n := range hosts {
		s.host(n).SoftwareRelease = s.deploy.toID
	}
	s.setDeployState(DeployHost)
	if len(pendingHosts(s.deploy.toID, s.hosts)) == 0 {
		s.setDeployState(DeployHostDone)
	}
}

// abortStates are the deploy states software_deploy_abort_api accepts
// (its require_deploy_state list).
var abortStates = []string{DeployActivate, DeployActivateDone, DeployActivateFailed, DeployCompleted, DeployHost, DeployHostDone, DeployHostFailed}

// abortDeploy is the VIM's sw-deploy-abort step (nfv _strategy_steps.py
// SwDeployAbortStep.apply): skipped when the deploy is already rolling back
// or only started; else USM's "software deploy abort"
// (software_deploy_abort_api): refused outside abortStates and when
// Kubernetes was upgraded since the deploy started; before activate the
// deploy goes to host-rollback, from activate-done / activate-failed /
// completed to activate-rollback-pending (deploy_state.py DeployState.abort).
// Hosts still pending are rolled back at once (deploy_host_state.py
// DeployHostState.abort: pending → rollback-deployed), so a deploy no host
// ran yet is host-rollback-done right away.
func (s *System) abortDeploy() string {
	d := s.deploy
	switch {
	case d == nil:
		return "Software deploy abort failed: no deployment in progress"
	case len(d.removing) > 0:
		return "Abort operation is not supported in patch removal"
	case strings.Contains(d.State, "rollback"), d.State == DeployStartDone, d.State == DeployStartFailed:
		return ""
	case !contains(abortStates, d.State):
		return fmt.Sprintf("Deploy must be in the following states to be able to abort: %s", strings.Join(abortStates, ", "))
	case d.initialKube != "" && s.activeKube() != d.initialKube:
		return fmt.Sprintf("Cannot rollback: Kubernetes was upgraded from %s to %s. Platform rollback is not supported after a successful Kubernetes upgrade.",
			d.initialKube, s.activeKube())
	}
	switch d.State {
	case DeployActivateDone, DeployActivateFailed, DeployCompleted:
		s.setDeployState(DeployActivateRollbackPending)
	default:
		s.setDeployState(DeployHostRollback)
		if len(s.hostsOn(d.toID)) == 0 {
			s.setDeployState(DeployHostRollbackDone)
		}
	}
	return ""
}

// activateRollback is sw-deploy-activate-rollback: from
// activate-rollback-pending (or -failed) through activate-rollback to
// activate-rollback-done (software_deploy_activate_rollback_api); skipped in
// any other state (SwDeployActivateRollbackStep.apply).
func (s *System) activateRollback() {
	if d := s.deploy; d != nil && (d.State == DeployActivateRollback || d.State == DeployActivateRollbackPending || d.State == DeployActivateRollbackFailed) {
		s.setDeployState(DeployActivateRollbackDone)
	}
}

// rollbackHosts ends "software deploy host-rollback" on hosts
// (software_deploy_host_rollback_api): they run the from-release again;
// host-rollback-done once no host runs the target.
func (s *System) rollbackHosts(hosts []string) {
	d := s.deploy
	for _, n := range hosts {
		s.host(n).SoftwareRelease = d.fromID
	}
	s.setDeployState(DeployHostRollback)
	if len(s.hostsOn(d.toID)) == 0 {
		s.setDeployState(DeployHostRollbackDone)
	}
}

// deleteStates are the deploy states software_deploy_delete_api accepts.
var deleteStates = []string{DeployHostRollbackDone, DeployCompleted, DeployStartDone, DeployStartFailed}

// deleteDeploy is "software deploy delete" (software_deploy_delete_api):
// after completed the new releases are deployed and, for a major release,
// the old major's releases unavailable (ReleaseState.replaced); after a
// rollback or a start the deploying releases are available again. Any
// other state is refused.
func (s *System) deleteDeploy() string {
	d := s.deploy
	if d == nil {
		return ""
	}
	if !contains(deleteStates, d.State) {
		return fmt.Sprintf("Deploy must be in the following states to be able to delete: %s", strings.Join(deleteStates, ", "))
	}
	if len(d.removing) > 0 {
		return s.deleteRemoval(d)
	}
	ids := append(append([]string(nil), d.together...), d.toID)
	if d.State != DeployCompleted {
		for _, id := range ids {
			s.release(id).State = ReleaseAvailable
		}
		s.deploy = nil
		s.record(EventDeployState, d.toID, "deleted")
		return ""
	}
	old := mustID(s.deployed)
	for _, id := range ids {
		s.release(id).State = ReleaseDeployed
	}
	if !mustID(d.toID).sameMajor(old) {
		for i := range s.releases {
			if mustID(s.releases[i].ID).sameMajor(old) {
				s.releases[i].State = ReleaseUnavailable
			}
		}
	}
	s.deployed = d.toID
	s.deploy = nil
	s.record(EventDeployState, d.toID, "deleted")
	s.record(EventReleaseDeployed, d.toID, "from "+old.full)
	return ""
}

// deleteRemoval is software_deploy_delete_api on a patch removal: refused
// before it completed ("Delete is not supported while removing a
// release"); once completed the removed patches become available
// (removing_release_state.available()) and the target runs.
func (s *System) deleteRemoval(d *Deploy) string {
	if d.State != DeployCompleted {
		return "Delete is not supported while removing a release"
	}
	for _, id := range d.removing {
		s.release(id).State = ReleaseAvailable
	}
	old := s.deployed
	s.deployed = d.toID
	s.deploy = nil
	s.record(EventDeployState, d.toID, "deleted")
	s.record(EventReleaseDeployed, d.toID, "from "+mustID(old).full)
	return ""
}

// hostsOn lists the hosts running release id.
func (s *System) hostsOn(id string) []*Host {
	var out []*Host
	for _, h := range s.hosts {
		if h.SoftwareRelease == id {
			out = append(out, h)
		}
	}
	return out
}

// deployedTogether lists the not-yet-deployed releases that target
// requires (transitively) and that USM deploys with it: older available
// patches of the same major.
func (s *System) deployedTogether(target *Release) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(r *Release)
	walk = func(r *Release) {
		for _, q := range r.Requires {
			req := s.release(q)
			if seen[q] || req == nil || req.State == ReleaseDeployed || req.State == ReleaseCommitted {
				continue
			}
			seen[q] = true
			walk(req)
			out = append(out, q)
		}
	}
	walk(target)
	return out
}
