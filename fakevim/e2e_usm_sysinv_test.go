package fakevim_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

func ids(rs []vim.Release) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ReleaseID)
	}
	return out
}

func TestUSMReleases(t *testing.T) {
	h := newHarness(t, starlingx.Simplex)
	ctx := context.Background()
	all, err := h.client.ListReleases(ctx, vim.ReleaseQuery{})
	require.NoError(t, err)
	require.Len(t, all, 5)
	ga := all[0]
	assert.Equal(t, "starlingx-13.01.0", ga.ReleaseID)
	assert.Equal(t, "deployed", ga.State)
	assert.Equal(t, "13.01.0", ga.SwVersion)
	assert.True(t, ga.Unremovable)
	assert.Equal(t, []string{"starlingx-13.01.2"}, all[3].Requires)
	assert.True(t, all[3].RebootRequired)

	avail, err := h.client.ListReleases(ctx, vim.ReleaseQuery{Show: "available"})
	require.NoError(t, err)
	assert.Equal(t, []string{"starlingx-13.01.1", "starlingx-13.01.2", "starlingx-27.03.0", "starlingx-27.03.1"}, ids(avail))
	major, err := h.client.ListReleases(ctx, vim.ReleaseQuery{Release: "starlingx-27.03.0"})
	require.NoError(t, err)
	assert.Equal(t, []string{"starlingx-27.03.0", "starlingx-27.03.1"}, ids(major), "release= matches the whole major, as USM does")

	_, err = h.client.GetRelease(ctx, "starlingx-99.99.0")
	require.True(t, vim.IsNotFound(err), "%v", err)
	assert.Equal(t, "Release starlingx-99.99.0 not found", vim.FaultString(err))
}

func TestUSMDeployDuringApply(t *testing.T) {
	h := newHarness(t, starlingx.Simplex)
	ctx := context.Background()
	st, err := h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.2"))
	require.NoError(t, err)
	h.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)
	_, err = h.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	deploys, err := h.client.ListDeploys(ctx)
	require.NoError(t, err)
	require.Len(t, deploys, 1, "the deploy exists while start-upgrade runs")
	assert.Equal(t, "start", deploys[0].State)
	h.step() // start-upgrade ends
	deploys, err = h.client.ListDeploys(ctx)
	require.NoError(t, err)
	require.Len(t, deploys, 1)
	assert.Equal(t, vim.Deploy{FromRelease: "13.01.0", ToRelease: "13.01.2", FeedRepo: "/var/www/pages/feed/rel-13.01/ostree_repo",
		CommitID: deploys[0].CommitID, State: "start-done"}, deploys[0])
	h.step() // query-alarms ends; controller-0's upgrade-hosts starts
	deploys, err = h.client.ListDeploys(ctx)
	require.NoError(t, err)
	assert.Equal(t, "host", deploys[0].State, "USM shows host while a host deploys")
	deploying, err := h.client.ListReleases(ctx, vim.ReleaseQuery{Show: "deploying"})
	require.NoError(t, err)
	assert.Equal(t, []string{"starlingx-13.01.1", "starlingx-13.01.2"}, ids(deploying))
}

func TestSysinvSystemHostsAndSwact(t *testing.T) {
	h := newHarness(t, starlingx.Duplex, func(c *starlingx.Config, _ *fakevim.Options, _ *vim.Config) { c.ActiveController = "controller-1" })
	ctx := context.Background()
	sys, err := h.client.GetSystem(ctx)
	require.NoError(t, err)
	assert.Equal(t, vim.System{UUID: sys.UUID, Name: "starlingx", SystemType: "Standard", SystemMode: "duplex", SoftwareVersion: "13.01"}, *sys)

	active := func() string {
		hosts, err := h.client.ListHosts(ctx)
		require.NoError(t, err)
		require.Len(t, hosts, 4)
		for _, host := range hosts {
			if host.ActiveController() {
				return host.Hostname
			}
		}
		return ""
	}
	assert.Equal(t, "controller-1", active())
	err = h.client.SwactHost(ctx, "controller-0")
	require.True(t, vim.IsBadRequest(err), "swact from the standby: %v", err)
	assert.Contains(t, vim.FaultString(err), "not the active controller", "sysinv's error_message wrapping is unwrapped")
	require.NoError(t, h.client.SwactHost(ctx, "controller-1"))
	assert.Equal(t, "controller-0", active())
	err = h.client.SwactHost(ctx, "worker-9")
	assert.True(t, vim.IsNotFound(err))

	versions, err := h.client.ListKubeVersions(ctx)
	require.NoError(t, err)
	require.Len(t, versions, 3)
	assert.Equal(t, vim.KubeVersion{Version: "v1.33.0", UpgradeFrom: []string{"v1.32.2"}, DowngradeTo: []string{"v1.32.2"},
		AppliedPatches: []string{}, AvailablePatches: []string{}, Target: true, State: "active"}, versions[1])
	ups, err := h.client.ListKubeUpgrades(ctx)
	require.NoError(t, err)
	assert.Empty(t, ups)
}

func TestSpeedClock(t *testing.T) {
	wall := &manualClock{t: t0}
	c := fakevim.NewSpeedClock(t0.Add(time.Hour), 60, wall.Now)
	assert.Equal(t, t0.Add(time.Hour), c.Now())
	wall.Add(time.Second)
	assert.Equal(t, t0.Add(time.Hour+time.Minute), c.Now(), "one model minute per real second")
	c.Skip(10 * time.Minute)
	assert.Equal(t, t0.Add(time.Hour+11*time.Minute), c.Now())
}

// TestSwactRefusedWhileTheDeployStarts: sysinv refuses a swact while the
// USM deploy is in a transient state (host.py
// _semantic_check_swact_upgrade, DEPLOY_STATE_TRANSIENT_STATES) with 400
// and its message, which the client returns as a bad request.
func TestSwactRefusedWhileTheDeployStarts(t *testing.T) {
	h := newHarness(t, starlingx.Duplex)
	ctx := context.Background()
	st, err := h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	h.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)
	_, err = h.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	require.NoError(t, h.client.DeleteStrategy(ctx, vim.StrategySwUpgrade, st.UUID, true))
	deploys, err := h.client.ListDeploys(ctx)
	require.NoError(t, err)
	require.Len(t, deploys, 1)
	require.Equal(t, "start", deploys[0].State)
	err = h.client.SwactHost(ctx, "controller-0")
	require.Error(t, err)
	assert.True(t, vim.IsBadRequest(err), "%v", err)
	assert.Contains(t, err.Error(), "Swact is not allowed. Upgrade in progress with 'start' state.")
}
