package starlingx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onHighestPatch is the starting point of a major upgrade: 13.01.2 on v1.34.1.
func onHighestPatch(c *Config) {
	c.DeployedRelease, c.ActiveKubeVersion = "starlingx-13.01.2", "v1.34.1"
	c.Releases[1].State = ReleaseDeployed
}

func TestDuplexMajorSwactsToController0(t *testing.T) {
	s := newSystem(t, Duplex, onHighestPatch, func(c *Config) { c.ActiveController = Controller1 })

	st := built(t, s, swReq("starlingx-27.03.0"))
	require.Equal(t, StateBuildFailed, st.State)
	assert.Contains(t, st.Build.Reason, "Active controller is controller-0: [Fail]")
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, st.UUID, false))

	require.Error(t, s.Swact(s.Now(), Controller0), "only the active controller swacts")
	require.NoError(t, s.Swact(s.Now(), Controller1))
	assert.Equal(t, Controller0, s.ActiveController(s.Now()))

	st = built(t, s, swReq("starlingx-27.03.0"))
	require.Equal(t, StateReadyToApply, st.State, st.Build.Reason)
	assert.Equal(t, []string{StepSwactHosts, StepStartUpgrade, StepQueryAlarms}, stepNames(st.Apply.Stages[0]),
		"major stages start with the swact away from controller-1")
	assert.Equal(t, []string{Controller1}, st.Apply.Stages[1].Steps[0].EntityNames, "controller-1 is upgraded first")
	assert.Equal(t, []string{StepLockHosts, StepUpgradeHosts, StepSystemStabilize, StepUnlockHosts, StepWaitAlarmsClear},
		stepNames(st.Apply.Stages[1]), "a reboot-required release locks and unlocks")
	assert.Equal(t, StepSwactHosts, st.Apply.Stages[2].Steps[0].Name, "controller-0 swacts before its lock")

	before := len(s.Events())
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, "", nil)
	require.NoError(t, err)
	runToEnd(t, s)
	got, _ := s.Strategy(s.Now(), SwUpgrade)
	require.Equal(t, StateApplied, got.State, got.Apply.Reason)

	var swacts []string
	for _, e := range s.Events()[before:] {
		if e.Kind == EventSwact {
			swacts = append(swacts, e.Detail)
		}
	}
	assert.Equal(t, []string{"controller-0 -> controller-1", "controller-1 -> controller-0"}, swacts)
	assert.Equal(t, Controller0, s.ActiveController(s.Now()), "the major step ends on controller-0")
	assert.Equal(t, "starlingx-27.03.0", s.DeployedRelease(s.Now()))
	for _, r := range s.Releases(s.Now()) {
		switch r.ID {
		case "starlingx-13.01.0", "starlingx-13.01.1", "starlingx-13.01.2":
			assert.Equal(t, ReleaseUnavailable, r.State, r.ID)
		case "starlingx-27.03.0":
			assert.Equal(t, ReleaseDeployed, r.State)
		}
	}
	assert.Equal(t, "27.03", s.SystemInfo(s.Now()).SoftwareVersion)
}

func TestSimplexMajorThenPatch(t *testing.T) {
	s := newSystem(t, Simplex, onHighestPatch)
	st := applied(t, s, swReq("starlingx-27.03.0"))
	assert.Equal(t, []string{StageSwUpgradeStart, StageSwUpgradeWorkers, StageSwUpgradeComplete, StageSwDeployDelete},
		stageNames(st.Apply), "AIO-SX: the controller goes through the worker stage")
	assert.NotContains(t, stepNames(st.Apply.Stages[0]), StepSwactHosts, "no swact on simplex")
	applied(t, s, swReq("starlingx-27.03.1"))
	assert.Equal(t, "starlingx-27.03.1", s.DeployedRelease(s.Now()))
	kv := s.KubeVersions(s.Now())
	var listed []string
	for _, k := range kv {
		listed = append(listed, k.Version)
	}
	assert.Equal(t, []string{"v1.34.1", "v1.35.0"}, listed, "sysinv lists the new release's versions")
}
