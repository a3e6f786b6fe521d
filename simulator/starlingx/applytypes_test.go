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
	assert.Equal(t, StateAborted, st.State, "activation needs every host on the release; the VIM then ran its abort phase")
	assert.Equal(t, ResultFailed, st.Apply.Result)
	assert.Contains(t, st.Apply.Reason, "hosts [worker-0 worker-1 worker-2] do not run starlingx-13.01.1")
	assert.Equal(t, DeployActivateFailed, s.Deploys(s.Now())[0].State)
}

// TestAllInOneControllersTakeTheWorkerPath pins nfv-vim _strategy.py
// SwUpgradeStrategy._add_upgrade_hosts_stages: All-in-one controllers have
// the worker personality, so their stages come from the worker path
// (_create_worker_host_lists): the controller apply type is never read
// (parallel builds), each controller gets its own sw-upgrade-worker-hosts
// stage, and a worker apply type of ignore leaves them out.
func TestAllInOneControllersTakeTheWorkerPath(t *testing.T) {
	s := newSystem(t, Duplex, func(c *Config) { c.Workers, c.SystemType = 0, "" })
	require.Equal(t, "All-in-one", s.cfg.SystemType)
	req := swReq("starlingx-13.01.1")
	req.ControllerApplyType = ApplyParallel
	st := built(t, s, req)
	require.Equal(t, StateReadyToApply, st.State, st.Build.Reason)
	var hosts [][]string
	for _, sg := range st.Apply.Stages {
		assert.NotEqual(t, StageSwUpgradeControllers, sg.Name)
		if sg.Name == StageSwUpgradeWorkers {
			for _, sp := range sg.Steps {
				if sp.Name == StepUpgradeHosts {
					hosts = append(hosts, sp.EntityNames)
				}
			}
		}
	}
	assert.Equal(t, [][]string{{"controller-1"}, {"controller-0"}}, hosts, "one stage per controller, the standby first")
	_, err := s.ApplyStrategy(s.Now(), SwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	runToEnd(t, s)
	st, _ = s.Strategy(s.Now(), SwUpgrade)
	assert.Equal(t, StateApplied, st.State, st.Apply.Reason)
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))

	req = swReq("starlingx-13.01.2")
	req.ControllerApplyType, req.WorkerApplyType, req.MaxParallelWorkerHosts = ApplySerial, ApplyParallel, 2
	st = built(t, s, req)
	require.Equal(t, StateReadyToApply, st.State, st.Build.Reason)
	n := 0
	for _, sg := range st.Apply.Stages {
		for _, sp := range sg.Steps {
			if sp.Name == StepUpgradeHosts {
				n++
				assert.Len(t, sp.EntityNames, 1, "a parallel worker apply type still upgrades AIO controllers one at a time")
			}
		}
	}
	assert.Equal(t, 2, n)
	require.NoError(t, s.DeleteStrategy(s.Now(), SwUpgrade, "", false))

	req = swReq("starlingx-13.01.2")
	req.WorkerApplyType = ApplyIgnore
	st = built(t, s, req)
	require.Equal(t, StateReadyToApply, st.State, st.Build.Reason)
	assert.NotContains(t, stageNames(st.Apply), StageSwUpgradeWorkers, "worker apply type ignore leaves AIO controllers out")
}
