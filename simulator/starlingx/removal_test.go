package starlingx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func releaseState(s *System, id string) string {
	for _, r := range s.Releases(s.Now()) {
		if r.ID == id {
			return r.State
		}
	}
	return ""
}

// TestPatchRemoval pins starlingx/update software_controller.py: a deploy
// of a release older than the running one of the same major removes the
// newer patches (_validate_releases_for_select, _get_metapackages_to_remove,
// software_deploy_start_api's remove branch: ReleaseState.start_remove,
// start → start-done); the VIM runs it as any sw-upgrade (nfv usm.py
// sw_deploy_get_upgrade_obj: downgrade = to < from; _build_complete_normal
// "is_deployed and not is_downgrade"); USM refuses to abort it ("Abort
// operation is not supported in patch removal") and to delete it before it
// completed ("Delete is not supported while removing a release"), so a
// rollback strategy cannot build (the target is deployed, not deploying);
// once deleted the removed patches are available.
func TestPatchRemoval(t *testing.T) {
	s := newSystem(t, Duplex)
	applied(t, s, swReq("starlingx-13.01.2"))
	require.Equal(t, "starlingx-13.01.2", s.DeployedRelease(s.Now()))
	require.Equal(t, ReleaseDeployed, releaseState(s, "starlingx-13.01.1"))

	st := built(t, s, swReq("starlingx-13.01.1"))
	require.Equal(t, StateReadyToApply, st.State, st.Build.Reason)
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runUntil(t, s, func() bool { return deployState(s) == DeployStartDone })
	d := s.Deploys(s.Now())[0]
	assert.Equal(t, "13.01.2", d.FromRelease)
	assert.Equal(t, "13.01.1", d.ToRelease)
	assert.Equal(t, ReleaseRemoving, releaseState(s, "starlingx-13.01.2"))
	assert.Equal(t, ReleaseDeployed, releaseState(s, "starlingx-13.01.1"))
	assert.Equal(t, "Delete is not supported while removing a release", s.deleteDeploy())
	assert.Equal(t, "Abort operation is not supported in patch removal", s.abortDeploy())
	runToEnd(t, s)
	got, _ := s.Strategy(s.Now(), SwUpgrade)
	require.Equal(t, StateApplied, got.State, got.Apply.Reason)
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))
	assert.Empty(t, s.Deploys(s.Now()))
	assert.Equal(t, "starlingx-13.01.1", s.DeployedRelease(s.Now()))
	assert.Equal(t, ReleaseAvailable, releaseState(s, "starlingx-13.01.2"))
	for _, h := range s.Hosts(s.Now()) {
		assert.Equal(t, "starlingx-13.01.1", h.SoftwareRelease, h.Hostname)
	}

	// The target of a removal must be deployed.
	a := newSystem(t, Simplex, func(c *Config) { c.DeployedRelease = "starlingx-13.01.2" })
	require.Equal(t, ReleaseAvailable, releaseState(a, "starlingx-13.01.1"))
	st = built(t, a, swReq("starlingx-13.01.1"))
	assert.Equal(t, StateBuildFailed, st.State)
	assert.Contains(t, st.Build.Reason, "removing a release is only supported by selecting a previous product release in deployed state")

	// A removal left by a failed strategy: no rollback builds for it.
	f := newSystem(t, Simplex)
	applied(t, f, swReq("starlingx-13.01.2"))
	f.faults.ApplyFailures = []StageFault{{Type: SwUpgrade, Step: StepActivateUpgrade, Reason: "activate failed"}}
	st = built(t, f, swReq("starlingx-13.01.1"))
	_, err = f.ApplyStrategy(f.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, f)
	require.NoError(t, f.DeleteStrategy(f.Now(), SwUpgrade, "", false))
	require.Equal(t, DeployActivateFailed, deployState(f))
	rb := CreateRequest{Type: SwUpgrade, ControllerApplyType: ApplySerial, StorageApplyType: ApplySerial,
		WorkerApplyType: ApplySerial, DefaultInstanceAction: InstanceStopStart, Rollback: true}
	st = built(t, f, rb)
	assert.Equal(t, StateBuildFailed, st.State)
	assert.Contains(t, st.Build.Reason, "Software release must be deploying for a rollback")
}
