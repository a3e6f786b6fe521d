package starlingx

import (
	"fmt"
	"strings"
	"time"
)

// runEffect performs a completed step's effect on the system. A non-empty
// return is the reason the step failed instead (build checks).
func (s *System) runEffect(st *Strategy, e effect) string {
	switch e.kind {
	case effCheckAlarms:
		// query-alarms collects the alarms and never fails here
		// (QueryAlarmsStep fail_on_alarms=False); the sw-upgrade build
		// fails in the precheck, the kube-upgrade build when it plans
		// (alarms.go).
	case effPrecheck:
		return s.precheck(st)
	case effCheckKubeVersions:
		return s.checkKubeVersions(st.Request.ToVersion)
	case effCheckKubeUpgrade:
		return s.checkKubeUpgrade(st.Request.ToVersion)
	case effCleanupAborted:
		if s.kubeUpgrade != nil && s.kubeUpgrade.State == KubeUpgradeAborted {
			s.kubeUpgrade = nil
		}
	case effSwact:
		s.swactAway(e.hosts[0])
	case effLock, effUnlock:
		s.setAdmin(e.hosts, e.kind == effLock)
	case effKubeAbort:
		return s.endKubeAbort()
	default:
		if reason := s.runDeployEffect(st, e); reason != "" {
			return reason
		}
		s.runKubeEffect(e)
	}
	return ""
}

// swactAway makes the other controller active when name is active; a
// swact of the standby is a no-op, as the VIM's SwactHostsStep skips it.
func (s *System) swactAway(name string) {
	h := s.host(name)
	if h == nil || !h.Active || !s.cfg.Mode.IsDuplex() {
		return
	}
	other := s.host(otherController(name))
	h.Active, other.Active = false, true
	s.record(EventSwact, name, name+" -> "+other.Hostname)
}

func (s *System) setAdmin(hosts []string, locked bool) {
	for _, n := range hosts {
		if h := s.host(n); h != nil {
			if locked {
				h.Administrative, h.Operational, h.Availability = "locked", "disabled", "online"
			} else {
				h.Administrative, h.Operational, h.Availability = "unlocked", "enabled", "available"
			}
		}
	}
}

// deployTransientStates are sysinv's DEPLOY_STATE_TRANSIENT_STATES
// (sysinv common/constants.py).
var deployTransientStates = []string{DeployStart, DeployActivate, DeployActivateRollback}

// swactDeployRefusal is sysinv's check of a USM deploy before a swact
// (api/controllers/v1/host.py _semantic_check_swact_upgrade): refused while
// the deploy is in a transient state, and when the controller to swact to
// has not deployed the new release unless neither controller has started.
// A host has deployed (DEPLOY_HOST_DEPLOYED_STATES) when it runs the
// target, or, while the deploy rolls back, the from-release again; it is
// pending (DEPLOY_HOST_PENDING_STATES) otherwise.
func (s *System) swactDeployRefusal(from string) string {
	d := s.deploy
	if d == nil {
		return ""
	}
	if contains(deployTransientStates, d.State) {
		return fmt.Sprintf("Swact is not allowed. Upgrade in progress with '%s' state.", d.State)
	}
	done := d.toID
	if strings.Contains(d.State, "rollback") {
		done = d.fromID
	}
	to := otherController(from)
	if s.host(to).SoftwareRelease == done {
		return ""
	}
	if s.host(from).SoftwareRelease != done {
		return "" // no controller has started: both pending
	}
	return "Swact is not allowed. New release has not been deployed to " + to
}

// Swact is sysinv's host-swact (PATCH /v1/ihosts/{id} action=swact): the
// named host must be the active controller of a duplex system; the other
// controller becomes active at once. Refused (400) while a strategy is
// applying, as sysinv refuses a swact while the VIM orchestrates.
func (s *System) Swact(now time.Time, hostname string) error {
	s.Advance(now)
	h := s.host(hostname)
	switch {
	case h == nil:
		return errf(404, "host %s not found", hostname)
	case !s.cfg.Mode.IsDuplex():
		return errf(400, "Swact action not allowed for a simplex system.")
	case !h.Active:
		return errf(400, "%s is not the active controller; swact from the active controller", hostname)
	case s.strategy != nil && (s.strategy.State == StateApplying || s.strategy.State == StateAborting):
		return errf(400, "Swact action not allowed while a %s strategy is %s.", s.strategy.Type, s.strategy.State)
	}
	if reason := s.swactDeployRefusal(hostname); reason != "" {
		return errf(400, "%s", reason)
	}
	s.swactAway(hostname)
	return nil
}
