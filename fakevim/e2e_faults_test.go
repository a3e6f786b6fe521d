package fakevim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

func TestUnavailableStormThenRecovery(t *testing.T) {
	h := newHarness(t, starlingx.Simplex)
	ctx := context.Background()
	st, err := h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	h.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)
	_, err = h.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	h.srv.ClearRequests()

	h.srv.ApplyFaults(fakevim.FaultRequest{UnavailableNext: 3})
	got, err := h.client.GetStrategy(ctx, vim.StrategySwUpgrade)
	require.NoError(t, err, "the GET rides out three 503s")
	assert.Equal(t, vim.StateApplying, got.State)
	assert.Equal(t, []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}, h.sleeps)
	var statuses []int
	for _, r := range h.srv.Requests() {
		statuses = append(statuses, r.Status)
	}
	assert.Equal(t, []int{503, 503, 503, 200}, statuses)

	h.srv.ApplyFaults(fakevim.FaultRequest{UnavailableNext: 1})
	_, err = h.client.CreateKubeUpgradeStrategy(ctx, vim.KubeUpgradeRequest{ToVersion: "v1.34.1"})
	require.True(t, vim.IsUnavailable(err), "%v", err)
	assert.Contains(t, vim.FaultString(err), "503 Service Unavailable")
	assert.Equal(t, 1, h.count(http.MethodPost, "/api/orchestration/kube-upgrade/strategy"), "a create is never retried")

	h.srv.ApplyFaults(fakevim.FaultRequest{UnavailableNext: 10})
	_, err = h.client.GetStrategy(ctx, vim.StrategySwUpgrade)
	require.True(t, vim.IsUnavailable(err), "five attempts, then the error: %v", err)
	h.srv.ApplyFaults(fakevim.FaultRequest{Reset: true})

	st2, _ := h.waitState(vim.StrategySwUpgrade, vim.StateApplied)
	assert.Equal(t, st.UUID, st2.UUID, "monitoring resumed on the same strategy")
	assert.Zero(t, h.count(http.MethodPost, "/api/orchestration/sw-upgrade/strategy"), "no second sw-upgrade strategy since the storm began")
}

func TestSlowAnswersTimeOutThenRecover(t *testing.T) {
	h := newHarness(t, starlingx.Simplex, func(_ *starlingx.Config, _ *fakevim.Options, c *vim.Config) {
		c.RequestTimeout = 100 * time.Millisecond
	})
	ctx := context.Background()
	_, err := h.client.GetStrategy(ctx, vim.StrategySwUpgrade) // token first, undelayed
	require.NoError(t, err)
	h.srv.ApplyFaults(fakevim.FaultRequest{Delay: fakevim.Duration(400 * time.Millisecond), DelayNext: 2})
	start := time.Now()
	_, err = h.client.GetStrategy(ctx, vim.StrategySwUpgrade)
	require.NoError(t, err, "two timed-out attempts, the third answers")
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Len(t, h.sleeps, 2)
}

func TestBuildFailedThenRetryThroughAdmin(t *testing.T) {
	h := newHarness(t, starlingx.Simplex)
	ctx := context.Background()
	body, _ := json.Marshal(map[string]any{"failNextBuilds": 1, "buildFailReason": "sw-deploy-precheck failed: injected"})
	resp, err := http.Post(h.hs.URL+"/admin/faults", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	_, err = h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	st, _ := h.waitState(vim.StrategySwUpgrade, vim.StateBuildFailed, vim.StateReadyToApply)
	require.Equal(t, vim.StateBuildFailed, st.State)
	assert.Equal(t, "sw-deploy-precheck failed: injected", st.BuildPhase.Reason)
	assert.Equal(t, "failed", st.BuildPhase.Stages[0].Steps[2].Result)
	require.NoError(t, h.client.DeleteStrategy(ctx, vim.StrategySwUpgrade, st.UUID, false))
	_, err = h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	st, _ = h.waitState(vim.StrategySwUpgrade, vim.StateBuildFailed, vim.StateReadyToApply)
	assert.Equal(t, vim.StateReadyToApply, st.State, "the retry builds")
}

func TestApplyFailedAtStage(t *testing.T) {
	h := newHarness(t, starlingx.Simplex, func(c *starlingx.Config, _ *fakevim.Options, _ *vim.Config) {
		c.Faults.ApplyFailures = []starlingx.StageFault{{StageID: 1}}
	})
	ctx := context.Background()
	st, err := h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	h.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)
	_, err = h.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	// apply-failed, then the VIM's own abort phase (nfv_common
	// Strategy.phase_complete → _abort): aborting → aborted, the apply
	// phase still failed
	st, _ = h.waitState(vim.StrategySwUpgrade, vim.StateAborted, vim.StateApplied)
	require.Equal(t, vim.StateAborted, st.State)
	assert.Equal(t, "abort", st.CurrentPhase)
	assert.Equal(t, "failed", st.ApplyPhase.Result)
	assert.Contains(t, st.ApplyPhase.Reason, "injected apply failure at stage 1")
	assert.Equal(t, "abort(100%)/stg:(0/0)", st.Progress())
}

func TestAdminEndpoints(t *testing.T) {
	h := newHarness(t, starlingx.Duplex)
	_, err := h.client.GetSystem(context.Background())
	require.NoError(t, err)
	var reqs []fakevim.Request
	getJSON(t, h.hs.URL+"/admin/requests", &reqs)
	require.Len(t, reqs, 2)
	assert.Equal(t, "keystone", reqs[0].Service)
	assert.Equal(t, "/v1/isystems", reqs[1].Path)

	var state map[string]any
	getJSON(t, h.hs.URL+"/admin/state", &state)
	assert.Equal(t, "starlingx-13.01.0", state["deployedRelease"])
	assert.Equal(t, "controller-0", state["activeController"])

	req, _ := http.NewRequest(http.MethodDelete, h.hs.URL+"/admin/requests", nil)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Empty(t, h.srv.Requests())

	body := `{"failApplyAtStage": 2, "strategyType": "kube-upgrade", "unavailableFor": "1m", "alarms": [{"id": "100.114"}]}`
	resp, err = http.Post(h.hs.URL+"/admin/faults", "application/json", bytes.NewBufferString(body))
	require.NoError(t, err)
	var faults map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&faults))
	resp.Body.Close()
	assert.Len(t, faults["applyFailures"], 1)
	h.srv.WithModel(func(m *starlingx.System, now time.Time) { assert.Len(t, m.Alarms(now), 1) })
	_, err = h.client.GetSystem(context.Background())
	assert.True(t, vim.IsUnavailable(err), "503 for a minute of wall time")
	h.wall.Add(time.Minute)
	_, err = h.client.GetSystem(context.Background())
	assert.NoError(t, err)
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
}
