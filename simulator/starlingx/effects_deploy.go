package starlingx

import "fmt"

// runDeployEffect performs the USM side of sw-upgrade steps (software
// deploy start / host / activate / complete / delete). A non-empty return
// fails the step.
func (s *System) runDeployEffect(st *Strategy, e effect) string {
	switch e.kind {
	case effStartDeploy:
		s.startDeploy(st)
	case effUpgradeHost:
		for _, n := range e.hosts {
			s.host(n).SoftwareRelease = s.deploy.toID
		}
		s.deploy.State = DeployHost
		if len(pendingHosts(s.deploy.toID, s.hosts)) == 0 {
			s.deploy.State = DeployHostDone
		}
	case effActivate:
		if p := pendingHosts(s.deploy.toID, s.hosts); len(p) > 0 {
			s.deploy.State = DeployActivateFailed
			return fmt.Sprintf("deploy activate failed: hosts %v do not run %s yet; apply the strategy with them included", names(p...), s.deploy.toID)
		}
		s.deploy.State = DeployActivateDone
	case effComplete:
		s.completeDeploy()
	case effDeployDelete:
		s.deploy = nil
	}
	return ""
}

// startDeploy is "software deploy start": the target and the older patches
// it brings along become deploying.
func (s *System) startDeploy(st *Strategy) {
	target := s.release(st.ReleaseID)
	together := s.deployedTogether(target)
	s.deploy = &Deploy{
		FromRelease: mustID(s.deployed).full, ToRelease: mustID(target.ID).full,
		FeedRepo: "/var/www/pages/feed/rel-" + mustID(target.ID).majorStr + "/ostree_repo",
		CommitID: fmt.Sprintf("%016x%016x%016x%016x", s.rng.Uint64(), s.rng.Uint64(), s.rng.Uint64(), s.rng.Uint64()), RebootRequired: target.RebootRequired,
		State: DeployStartDone, toID: target.ID, together: together,
	}
	for _, id := range append(together, target.ID) {
		s.release(id).State = ReleaseDeploying
	}
}

// completeDeploy is "software deploy complete": the new releases are
// deployed; after a major release the old major's releases become
// unavailable (states.py release life cycle).
func (s *System) completeDeploy() {
	d := s.deploy
	d.State = DeployCompleted
	old := mustID(s.deployed)
	for _, id := range append(append([]string(nil), d.together...), d.toID) {
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
	s.record(EventReleaseDeployed, d.toID, "from "+old.full)
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
