package fakevim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// raw sends one request with a fresh token and returns status and body.
func (h *harness) raw(method, path, body string) (int, string) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.hs.URL+path, strings.NewReader(body))
	require.NoError(h.t, err)
	req.Header.Set("X-Auth-Token", issuedTokens(h)[0])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	return resp.StatusCode, string(b)
}

const swCreate = `{"controller-apply-type":"serial","storage-apply-type":"serial","worker-apply-type":"serial",
	"default-instance-action":"stop-start","release":["starlingx-13.01.1"],"delete":true}`

// TestVIMDeleteAnswers200Empty: SwUpdateStrategyAPI.delete is
// wsexpose(None, …, status_code=httplib.OK) (starlingx/nfv
// _sw_update_strategy.py): 200, no body.
func TestVIMDeleteAnswers200Empty(t *testing.T) {
	h := newHarness(t, starlingx.Duplex)
	code, _ := h.raw(http.MethodPost, "/api/orchestration/sw-upgrade/strategy", swCreate)
	require.Equal(t, http.StatusOK, code)
	h.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)
	code, body := h.raw(http.MethodDelete, "/api/orchestration/sw-upgrade/strategy", `{"force": false}`)
	assert.Equal(t, http.StatusOK, code)
	assert.Empty(t, body)
}

// TestVIMGetByUUIDNeverFinds: get_one never sets sw_update_type, so
// vim_sw_update_api_get_strategy (_vim_sw_update_api_events.py) answers
// NOT_FOUND even for the current strategy's uuid; a malformed uuid is 400.
func TestVIMGetByUUIDNeverFinds(t *testing.T) {
	h := newHarness(t, starlingx.Duplex)
	st, err := h.client.CreateSwUpgradeStrategy(context.Background(), swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	code, _ := h.raw(http.MethodGet, "/api/orchestration/sw-upgrade/strategy/"+st.UUID, "")
	assert.Equal(t, http.StatusNotFound, code)
	code, body := h.raw(http.MethodGet, "/api/orchestration/sw-upgrade/strategy/not-a-uuid", "")
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, "Invalid strategy uuid, uuid=not-a-uuid")
	got, err := h.client.GetStrategyByUUID(context.Background(), vim.StrategySwUpgrade, st.UUID)
	require.NoError(t, err, "the client reads the strategy and compares uuids instead")
	assert.Equal(t, st.UUID, got.UUID)
}

// TestVIMKubeUpgradeCreateRules: KubeUpgradeStrategyAPI.post refuses a
// controller-apply-type other than serial and normalizes to-version.
func TestVIMKubeUpgradeCreateRules(t *testing.T) {
	h := newHarness(t, starlingx.Duplex)
	body := func(ctrl, to string) string {
		return `{"to-version":"` + to + `",` + ctrl + `"storage-apply-type":"serial","worker-apply-type":"serial","default-instance-action":"stop-start"}`
	}
	code, resp := h.raw(http.MethodPost, "/api/orchestration/kube-upgrade/strategy", body(`"controller-apply-type":"parallel",`, "v1.34.1"))
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, resp, "controller-apply-type must be 'serial' for kube-upgrade")
	code, resp = h.raw(http.MethodPost, "/api/orchestration/kube-upgrade/strategy", body("", "V1.34.1"))
	require.Equal(t, http.StatusOK, code, resp)
	st, _ := h.waitState(vim.StrategyKubeUpgrade, vim.StateReadyToApply, vim.StateBuildFailed)
	assert.Equal(t, vim.StateReadyToApply, st.State, "to-version V1.34.1 is taken as v1.34.1: %s", st.BuildPhase.Reason)
	assert.Equal(t, "v1.34.1", st.KubeTarget())
	require.NoError(t, h.client.DeleteStrategy(context.Background(), vim.StrategyKubeUpgrade, st.UUID, false))
	code, resp = h.raw(http.MethodPost, "/api/orchestration/kube-upgrade/strategy", body(`"controller-apply-type":"serial",`, "1.34.1"))
	require.Equal(t, http.StatusOK, code, resp)
	st, _ = h.waitState(vim.StrategyKubeUpgrade, vim.StateReadyToApply, vim.StateBuildFailed)
	assert.Equal(t, "v1.34.1", st.KubeTarget(), "a leading v is added")
}

// TestVIMActionsStageID: SwUpdateStrategyActionData.stage_id is a wsme int:
// absent is refused for the -stage actions, null is None (the whole
// strategy; what sw-manager … abort sends without --stage-id) and a string
// of digits is a number (sw-manager … --stage-id 1).
func TestVIMActionsStageID(t *testing.T) {
	h := newHarness(t, starlingx.Duplex)
	_, err := h.client.CreateSwUpgradeStrategy(context.Background(), swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	h.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)
	actions := "/api/orchestration/sw-upgrade/strategy/actions"
	code, resp := h.raw(http.MethodPost, actions, `{"action":"apply-stage"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, resp, "No stage-id received")
	code, resp = h.raw(http.MethodPost, actions, `{"action":"apply-stage","stage-id":"x"}`)
	assert.Equal(t, http.StatusBadRequest, code, resp)
	code, resp = h.raw(http.MethodPost, actions, `{"action":"apply-stage","stage-id":"0"}`)
	assert.Equal(t, http.StatusAccepted, code, resp)
	code, resp = h.raw(http.MethodPost, actions, `{"action":"abort-stage","stage-id":null}`)
	assert.Equal(t, http.StatusAccepted, code, resp)
	st, _ := h.waitState(vim.StrategySwUpgrade, vim.StateAborted, vim.StateAbortFailed)
	assert.Equal(t, vim.StateAborted, st.State)
}

// TestUSMReleaseHasOnlyRealKeys: a release record has exactly the keys of
// starlingx/update software/software/release_data.py to_query_dict; in
// particular no supported_k8s_versions.
func TestUSMReleaseHasOnlyRealKeys(t *testing.T) {
	h := newHarness(t, starlingx.Duplex)
	code, body := h.raw(http.MethodGet, "/v1/release", "")
	require.Equal(t, http.StatusOK, code)
	var rels []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &rels))
	require.NotEmpty(t, rels)
	want := []string{"activation_scripts", "component", "description", "install_instructions", "metapackages", "packages",
		"pre_upgrade_deploy", "preinstalled_patches", "prepatched_iso", "reboot_required", "release_id", "requires", "state",
		"status", "summary", "sw_version", "unremovable", "warnings"}
	for _, r := range rels {
		var keys []string
		for k := range r {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		assert.Equal(t, want, keys)
	}
}
