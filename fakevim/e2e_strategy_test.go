package fakevim_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

func TestSwUpgradeCreateApplyMonitorToApplied(t *testing.T) {
	h := newHarness(t, starlingx.Duplex)
	ctx := context.Background()

	none, err := h.client.GetStrategy(ctx, vim.StrategySwUpgrade)
	require.NoError(t, err)
	assert.Nil(t, none)
	cur, err := h.client.CurrentStrategy(ctx)
	require.NoError(t, err)
	assert.Nil(t, cur)

	st, err := h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.2"))
	require.NoError(t, err)
	assert.Equal(t, vim.StateBuilding, st.State)
	assert.Equal(t, vim.ReleaseList{"starlingx-13.01.2"}, st.Release)
	assert.Equal(t, "build", st.CurrentPhase)
	assert.Equal(t, "ignore", st.SwiftApplyType)

	st, _ = h.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply, vim.StateBuildFailed)
	require.Equal(t, vim.StateReadyToApply, st.State, st.BuildPhase.Reason)
	assert.Equal(t, "starlingx-13.01.2", st.ReleaseID)
	assert.Equal(t, 7, st.ApplyPhase.TotalStages)
	assert.Equal(t, "sw-upgrade-start", st.ApplyPhase.Stages[0].StageName)
	assert.Equal(t, "start-upgrade", st.ApplyPhase.Stages[0].Steps[0].StepName)

	applied, err := h.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	assert.Equal(t, vim.StateApplying, applied.State)
	cur, err = h.client.CurrentStrategy(ctx)
	require.NoError(t, err)
	assert.Equal(t, &vim.CurrentStrategy{Name: vim.StrategySwUpgrade, State: vim.StateApplying}, cur)

	st, progress := h.waitState(vim.StrategySwUpgrade, vim.StateApplied, vim.StateApplyFailed)
	require.Equal(t, vim.StateApplied, st.State, st.ApplyPhase.Reason)
	assert.Contains(t, progress, "apply(0%)/stg:(0/7) sw-upgrade-start")
	assert.Contains(t, progress, "apply(100%)/stg:(7/7) sw-deploy-delete")
	assert.Equal(t, "success", st.ApplyPhase.Result)
	assert.NotEmpty(t, st.ApplyPhase.StartDateTime)
	require.NoError(t, h.client.DeleteStrategy(ctx, vim.StrategySwUpgrade, st.UUID, false))

	rel, err := h.client.GetRelease(ctx, "starlingx-13.01.2")
	require.NoError(t, err)
	assert.Equal(t, "deployed", rel.State)
	assert.Equal(t, "13.01.2", rel.SwVersion)
	deploys, err := h.client.ListDeploys(ctx)
	require.NoError(t, err)
	assert.Empty(t, deploys)
	assert.Equal(t, 1, h.count(http.MethodPost, "/api/orchestration/sw-upgrade/strategy"), "exactly one strategy created")
	assert.Equal(t, 1, h.count(http.MethodPost, "/v3/auth/tokens"), "one token for the whole run")
}

func TestKubeUpgradeOverHTTP(t *testing.T) {
	h := newHarness(t, starlingx.Duplex)
	ctx := context.Background()
	st, err := h.client.CreateKubeUpgradeStrategy(ctx, vim.KubeUpgradeRequest{ToVersion: "v1.34.1"})
	require.NoError(t, err)
	assert.Empty(t, st.Release, "a kube-upgrade strategy carries no release")
	st, _ = h.waitState(vim.StrategyKubeUpgrade, vim.StateReadyToApply)
	assert.Equal(t, "v1.34.1", st.KubeTarget(), "read from the per-version stage names")
	_, err = h.client.ApplyStrategy(ctx, vim.StrategyKubeUpgrade, st.UUID, nil)
	require.NoError(t, err)

	for i := 0; i < 30 && h.step(); i++ {
	}
	ups, err := h.client.ListKubeUpgrades(ctx)
	require.NoError(t, err)
	require.Len(t, ups, 1)
	assert.Equal(t, "v1.33.0", ups[0].FromVersion)
	assert.Equal(t, "v1.34.1", ups[0].ToVersion)

	st, _ = h.waitState(vim.StrategyKubeUpgrade, vim.StateApplied)
	versions, err := h.client.ListKubeVersions(ctx)
	require.NoError(t, err)
	byVersion := map[string]vim.KubeVersion{}
	for _, v := range versions {
		byVersion[v.Version] = v
	}
	assert.Equal(t, "active", byVersion["v1.34.1"].State)
	assert.True(t, byVersion["v1.34.1"].Target)
	assert.Equal(t, []string{"v1.33.0"}, byVersion["v1.34.1"].UpgradeFrom, "upgrade_from comes from the per-version show")
	hosts, err := h.client.ListHosts(ctx)
	require.NoError(t, err)
	for _, host := range hosts {
		if host.Hostname == "controller-1" {
			assert.True(t, host.ActiveController(), "the kubelet stages swacted to controller-1")
		}
	}
}

func TestSecondCreateConflictsAndDeleteRules(t *testing.T) {
	h := newHarness(t, starlingx.Simplex)
	ctx := context.Background()
	err := h.client.DeleteStrategy(ctx, vim.StrategySwUpgrade, "", false)
	assert.True(t, vim.IsNotFound(err), "delete when none: %v", err)

	st, err := h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	_, err = h.client.CreateKubeUpgradeStrategy(ctx, vim.KubeUpgradeRequest{ToVersion: "v1.34.1"})
	require.True(t, vim.IsConflict(err), "%v", err)
	assert.Equal(t, "strategy already exists of type:sw-upgrade", vim.FaultString(err))

	err = h.client.DeleteStrategy(ctx, vim.StrategySwUpgrade, st.UUID, false)
	require.True(t, vim.IsConflict(err), "no delete while building: %v", err)
	assert.Contains(t, err.Error(), "strategy is being built, can't delete")
	require.NoError(t, h.client.DeleteStrategy(ctx, vim.StrategySwUpgrade, st.UUID, true))
	log := h.srv.Requests()
	last := log[len(log)-1]
	require.NotNil(t, last.Force)
	assert.True(t, *last.Force)
}

func TestStaleUUIDActions(t *testing.T) {
	h := newHarness(t, starlingx.Simplex)
	ctx := context.Background()
	old, err := h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	h.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)
	require.NoError(t, h.client.DeleteStrategy(ctx, vim.StrategySwUpgrade, old.UUID, false))
	_, err = h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	h.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)

	_, err = h.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, old.UUID, nil)
	require.True(t, vim.IsNotFound(err), "%v", err)
	assert.Equal(t, "strategy does not exist", vim.FaultString(err))
	_, err = h.client.AbortStrategy(ctx, vim.StrategySwUpgrade, old.UUID, nil)
	assert.True(t, vim.IsNotFound(err))
	err = h.client.DeleteStrategy(ctx, vim.StrategySwUpgrade, old.UUID, true)
	assert.True(t, vim.IsNotFound(err))
	_, err = h.client.GetStrategyByUUID(ctx, vim.StrategySwUpgrade, old.UUID)
	assert.True(t, vim.IsNotFound(err), "the VIM answers 404 for a gone uuid: %v", err)
	assert.Zero(t, h.count(http.MethodPost, "/api/orchestration/sw-upgrade/strategy/actions"), "no action reached the VIM")
	cur, _ := h.client.GetStrategy(ctx, vim.StrategySwUpgrade)
	assert.Equal(t, vim.StateReadyToApply, cur.State, "the new strategy was not touched")
}

func TestRefusedApplyIsNotRetried(t *testing.T) {
	h := newHarness(t, starlingx.Simplex)
	ctx := context.Background()
	st, err := h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	_, err = h.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	require.Error(t, err)
	e, ok := err.(*vim.Error)
	require.True(t, ok)
	assert.Equal(t, 500, e.StatusCode, "the VIM answers a refused apply with 500")
	assert.Contains(t, e.FaultString, "not ready-to-apply")
	assert.Equal(t, 1, h.count(http.MethodPost, "/api/orchestration/sw-upgrade/strategy/actions"), "POSTs are never retried")
	_, err = h.client.AbortStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	assert.True(t, vim.IsBadRequest(err))
	assert.Contains(t, vim.FaultString(err), "Abort rejected")
}

func TestApplyStageAndAbortOverHTTP(t *testing.T) {
	h := newHarness(t, starlingx.Simplex)
	ctx := context.Background()
	st, err := h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	h.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)
	zero := 0
	got, err := h.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, st.UUID, &zero)
	require.NoError(t, err)
	assert.Equal(t, 1, got.ApplyPhase.StopAtStage)
	for h.step() {
	}
	got, _ = h.client.GetStrategy(ctx, vim.StrategySwUpgrade)
	assert.Equal(t, vim.StateApplying, got.State)
	assert.Equal(t, 1, got.ApplyPhase.CurrentStage)
	got, err = h.client.AbortStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	assert.Equal(t, vim.StateAborted, got.State)
	actions := []string{}
	for _, r := range h.srv.Requests() {
		if r.Action != "" {
			actions = append(actions, r.Action)
		}
	}
	assert.Equal(t, []string{"apply-stage", "abort"}, actions)
}
