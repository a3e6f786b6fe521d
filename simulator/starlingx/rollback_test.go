package starlingx

import (
	"time"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rollbackReq() CreateRequest {
	return CreateRequest{Type: SwUpgrade, ControllerApplyType: ApplySerial, StorageApplyType: ApplySerial,
		WorkerApplyType: ApplySerial, DefaultInstanceAction: InstanceStopStart, Rollback: true}
}

// deployStates are the USM deploy states recorded so far, in order.
func deployStates(s *System) []string {
	var out []string
	for _, e := range s.Events() {
		if e.Kind == EventDeployState {
			out = append(out, e.Detail)
		}
	}
	return out
}

// abortForward applies a forward strategy, aborts it once cond holds and
// runs it to "aborted", then deletes it.
func abortForward(t *testing.T, s *System, req CreateRequest, cond func() bool) {
	t.Helper()
	st := built(t, s, req)
	require.Equal(t, StateReadyToApply, st.State, st.Build.Reason)
	_, err := s.ApplyStrategy(s.Now(), req.Type, st.UUID, nil)
	require.NoError(t, err)
	runUntil(t, s, cond)
	_, err = s.AbortStrategy(s.Now(), req.Type, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, s)
	got, _ := s.Strategy(s.Now(), req.Type)
	require.Equal(t, StateAborted, got.State)
	require.NoError(t, s.DeleteStrategy(s.Now(), req.Type, "", false))
}

func deployState(s *System) string {
	if d := s.Deploys(s.Now()); len(d) == 1 {
		return d[0].State
	}
	return ""
}

func TestRollbackAfterStartDeletesTheDeploy(t *testing.T) {
	s := newSystem(t, Simplex)
	abortForward(t, s, swReq("starlingx-13.01.2"), func() bool { return deployState(s) == DeployStart })
	require.Equal(t, DeployStartDone, deployState(s), "the running start-upgrade finished before the abort took effect")

	rb := built(t, s, rollbackReq())
	require.Equal(t, StateReadyToApply, rb.State, rb.Build.Reason)
	assert.Equal(t, "starlingx-13.01.2", rb.ReleaseID, "the release being rolled back")
	assert.Equal(t, []string{StageSwUpgradeRollbackStart, StageSwUpgradeRollbackComplete}, stageNames(rb.Apply))
	assert.Equal(t, []string{StepQueryAlarms, StepSwDeployAbort, StepSwDeployActivateRbk}, stepNames(rb.Apply.Stages[0]))
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))
	applied(t, s, rollbackReq())

	assert.Empty(t, s.Deploys(s.Now()))
	assert.Equal(t, []string{DeployStart, DeployStartDone, "deleted"}, deployStates(s))
	for _, id := range []string{"starlingx-13.01.1", "starlingx-13.01.2"} {
		r, _ := s.Release(s.Now(), id)
		assert.Equal(t, ReleaseAvailable, r.State, id)
	}
	assert.Equal(t, "starlingx-13.01.0", s.DeployedRelease(s.Now()))
}

func TestRollbackAfterAHostRanTheRelease(t *testing.T) {
	s := newSystem(t, Simplex)
	abortForward(t, s, swReq("starlingx-13.01.2"), func() bool { return s.Hosts(s.Now())[0].SoftwareRelease == "starlingx-13.01.2" })
	require.Equal(t, DeployHostDone, deployState(s))

	rb := built(t, s, rollbackReq())
	require.Equal(t, StateReadyToApply, rb.State, rb.Build.Reason)
	assert.Equal(t, []string{StageSwUpgradeRollbackStart, StageSwUpgradeWorkers, StageSwUpgradeRollbackComplete}, stageNames(rb.Apply))
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))
	applied(t, s, rollbackReq())

	assert.Empty(t, s.Deploys(s.Now()))
	assert.Equal(t, "starlingx-13.01.0", s.Hosts(s.Now())[0].SoftwareRelease)
	assert.Equal(t, []string{DeployStart, DeployStartDone, DeployHost, DeployHostDone, DeployHostRollback, DeployHostRollbackDone, "deleted"}, deployStates(s))
}

func TestRollbackAfterCompleteRollsBackActivateThenHosts(t *testing.T) {
	s := newSystem(t, Duplex)
	req := swReq("starlingx-13.01.1")
	req.Delete = false
	applied(t, s, req)
	require.Equal(t, DeployCompleted, deployState(s))
	assert.Equal(t, "starlingx-13.01.0", s.DeployedRelease(s.Now()), "the releases stay deploying until the deploy is deleted")

	rb := built(t, s, rollbackReq())
	require.Equal(t, StateReadyToApply, rb.State, rb.Build.Reason)
	names := stageNames(rb.Apply)
	assert.Equal(t, StageSwUpgradeRollbackStart, names[0])
	assert.Equal(t, StageSwUpgradeRollbackComplete, names[len(names)-1])
	assert.Len(t, names, 2+4, "every host rolls back: two workers, two controllers")
	ctrl0 := rb.Apply.Stages[3].Steps
	assert.Equal(t, []string{Controller1}, ctrl0[len(ctrl0)-2].EntityNames, "patch: the active controller (controller-0) rolls back last")
	_, err := s.AbortStrategy(s.Now(), SwUpgrade, rb.UUID, nil)
	assert.Equal(t, 400, code(err), "not applying yet")
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))
	applied(t, s, rollbackReq())

	assert.Empty(t, s.Deploys(s.Now()))
	for _, h := range s.Hosts(s.Now()) {
		assert.Equal(t, "starlingx-13.01.0", h.SoftwareRelease, h.Hostname)
	}
	states := deployStates(s)
	i := indexOf(states, DeployActivateRollbackPending)
	require.Positive(t, i, "%v", states)
	assert.Equal(t, []string{DeployCompleted, DeployActivateRollbackPending, DeployActivateRollback, DeployActivateRollbackDone, DeployHostRollback}, states[i-1:i+4])
	assert.Equal(t, []string{DeployHostRollbackDone, "deleted"}, states[len(states)-2:])
	r, _ := s.Release(s.Now(), "starlingx-13.01.1")
	assert.Equal(t, ReleaseAvailable, r.State)
}

func TestRollbackBuildRefusals(t *testing.T) {
	s := newSystem(t, Simplex)
	st := built(t, s, rollbackReq())
	assert.Equal(t, StateBuildFailed, st.State)
	assert.Equal(t, "Software release does not exist or is unavailable", st.Build.Reason, "nothing to roll back")
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))

	for _, c := range []struct {
		mutate func(*CreateRequest)
		reason string
	}{
		{func(r *CreateRequest) { r.Releases = []string{"starlingx-13.01.1"} }, "Cannot set both release and rollback"},
		{func(r *CreateRequest) { r.Delete = true }, "Cannot set both delete and rollback, delete is set by default"},
	} {
		req := rollbackReq()
		c.mutate(&req)
		st, err := s.CreateStrategy(s.Now(), req)
		require.NoError(t, err)
		assert.Equal(t, StateBuildFailed, st.State)
		assert.Equal(t, c.reason, st.Build.Reason)
		require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))
	}
}

func TestDeleteRefusedWhileHostsRunTheRelease(t *testing.T) {
	s := newSystem(t, Simplex, func(c *Config) {
		c.Faults.ApplyFailures = []StageFault{{StageID: 2, Reason: "activate refused"}}
	})
	st := built(t, s, swReq("starlingx-13.01.1"))
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, s)
	got, _ := s.Strategy(s.Now(), SwUpgrade)
	require.Equal(t, StateAborted, got.State, "apply-failed, then the VIM's abort phase")
	assert.Equal(t, DeployHostDone, deployState(s), "the complete stage failed at its first step")
	assert.Contains(t, s.deleteDeploy(), "Deploy must be in the following states to be able to delete: host-rollback-done, completed, start-done, start-failed",
		"USM refuses deploy delete while hosts run the release: only a rollback frees the system")
	assert.Equal(t, DeployHostDone, deployState(s))
}

func TestFailedStepsLeaveFailedStates(t *testing.T) {
	s := newSystem(t, Simplex, func(c *Config) {
		c.Faults.ApplyFailures = []StageFault{{StageID: 0, Type: SwUpgrade}}
	})
	st := built(t, s, swReq("starlingx-13.01.1"))
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, s)
	assert.Equal(t, DeployStartFailed, deployState(s), "a failed start-upgrade leaves start-failed (deploy_state.py start_failed)")

	k := newSystem(t, Duplex, func(c *Config) {
		c.Faults.ApplyFailures = []StageFault{{StageID: 1, Type: KubeUpgrade}}
	})
	ks := built(t, k, kubeReq("v1.34.1"))
	_, err = k.ApplyStrategy(k.Now(), KubeUpgrade, ks.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, k)
	assert.Equal(t, "downloading-images-failed", k.KubeUpgrades(k.Now())[0].State)
	require.NoError(t, k.DeleteStrategy(k.Now(), KubeUpgrade, "", false))
	again := built(t, k, kubeReq("v1.34.1"))
	assert.Equal(t, StageKubeDownloadImages, again.Apply.Stages[0].Name, "a new strategy resumes at the failed step")
}

func TestKubeAbortDuplexRefusedSimplexRestores(t *testing.T) {
	d := newSystem(t, Duplex)
	ds := built(t, d, kubeReq("v1.34.1"))
	_, err := d.ApplyStrategy(d.Now(), KubeUpgrade, ds.UUID, nil)
	require.NoError(t, err)
	_, err = d.AbortStrategy(d.Now(), KubeUpgrade, ds.UUID, nil)
	assert.Equal(t, 400, code(err))
	assert.Contains(t, err.Error(), "Abort rejected: abort is not supported for kube-upgrade in the current configuration.")

	s := newSystem(t, Simplex)
	abortForward(t, s, kubeReq("v1.34.1"), func() bool {
		return s.Hosts(s.Now())[0].ControlPlaneVersion == "v1.34.1"
	})
	assert.Equal(t, "v1.33.0", s.ActiveKubeVersion(s.Now()), "sysinv's abort restored the control plane")
	require.Len(t, s.KubeUpgrades(s.Now()), 1)
	assert.Equal(t, KubeUpgradeAborted, s.KubeUpgrades(s.Now())[0].State)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func TestSwactRefusedDuringTransientDeployAndBeforeThePeerHasTheRelease(t *testing.T) {
	s := newSystem(t, Duplex, func(c *Config) {
		c.StepDurations = map[string]time.Duration{StepStartUpgrade: 10 * time.Minute}
		c.Faults.ApplyFailures = []StageFault{{Type: SwUpgrade, Step: StepUpgradeHosts, Reason: "stop after controller-1"}}
	})
	st := built(t, s, swReq("starlingx-13.01.1"))
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	require.Equal(t, DeployStart, deployState(s))
	// Swact is refused while a strategy applies anyway; the deploy checks
	// need the strategy gone.
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", true))
	err = s.Swact(s.Now(), Controller0)
	assert.Equal(t, 400, code(err))
	assert.Contains(t, err.Error(), "Swact is not allowed. Upgrade in progress with 'start' state.")

	s.deploy.State = DeployHost // controller-1 has the release, controller-0 not
	s.host(Controller1).SoftwareRelease = "starlingx-13.01.1"
	require.NoError(t, s.Swact(s.Now(), Controller0), "to a controller that has the release")
	err = s.Swact(s.Now(), Controller1)
	assert.Contains(t, err.Error(), "Swact is not allowed. New release has not been deployed to controller-0")
}
