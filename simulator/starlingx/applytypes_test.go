package starlingx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplyTypes(t *testing.T) {
	s := newSystem(t, Duplex, func(c *Config) { c.Workers = 3 })
	req := swReq("starlingx-13.01.1")
	req.WorkerApplyType, req.MaxParallelWorkerHosts = ApplyParallel, 2
	st := built(t, s, req)
	require.Equal(t, StateReadyToApply, st.State, st.Build.Reason)
	var batches [][]string
	for _, sg := range st.Apply.Stages {
		if sg.Name == StageSwUpgradeWorkers {
			batches = append(batches, sg.Steps[0].EntityNames)
		}
	}
	assert.Equal(t, [][]string{{"worker-0", "worker-1"}, {"worker-2"}}, batches, "parallel workers in batches of max-parallel-worker-hosts")
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))

	req = swReq("starlingx-13.01.1")
	req.ControllerApplyType = ApplyParallel
	st = built(t, s, req)
	assert.Equal(t, StateBuildFailed, st.State)
	assert.Equal(t, "parallel apply type not allowed for controllers", st.Build.Reason)
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))

	req = swReq("starlingx-13.01.1")
	req.WorkerApplyType = ApplyIgnore
	st = built(t, s, req)
	assert.NotContains(t, stageNames(st.Apply), StageSwUpgradeWorkers)
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, s)
	st, _ = s.Strategy(s.Now(), SwUpgrade)
	assert.Equal(t, StateApplyFailed, st.State, "activation needs every host on the release")
	assert.Contains(t, st.Apply.Reason, "hosts [worker-0 worker-1 worker-2] do not run starlingx-13.01.1")
	assert.Equal(t, DeployActivateFailed, s.Deploys(s.Now())[0].State)
}
