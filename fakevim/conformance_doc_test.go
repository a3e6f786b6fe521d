package fakevim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// conformanceDoc is the table of every wire field fakevim serves, each
// with its real definition; see TestEveryServedFieldHasAConformanceRow.
const conformanceDoc = "../docs/starlingx-conformance.md"

// collectKeys adds "<object> | `key`" for every key of v, naming nested
// objects by the child's key (a strategy's "apply-phase" is a phase).
func collectKeys(object string, v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			out[object+" | `"+k+"`"] = true
			collectKeys(childObject(object, k), c, out)
		}
	case []any:
		for _, c := range x {
			collectKeys(object, c, out)
		}
	}
}

// childObject names the object under key of object.
func childObject(object, key string) string {
	switch key {
	case "build-phase", "apply-phase", "abort-phase":
		return "vim phase"
	case "stages":
		return "vim stage"
	case "steps":
		return "vim step"
	case "strategy":
		return object
	}
	return object + "." + key
}

// served fetches path and collects its keys as object.
func (h *harness) served(object, path string, out map[string]bool) {
	h.t.Helper()
	code, body := h.raw(http.MethodGet, path, "")
	require.Equal(h.t, http.StatusOK, code, "%s: %s", path, body)
	var v any
	require.NoError(h.t, json.Unmarshal([]byte(body), &v), path)
	collectKeys(object, v, out)
}

// TestEveryServedFieldHasAConformanceRow fails when fakevim serves a
// response field that docs/starlingx-conformance.md has no row for: every
// field must be traced to the real StarlingX code that defines it.
func TestEveryServedFieldHasAConformanceRow(t *testing.T) {
	doc, err := os.ReadFile(conformanceDoc)
	require.NoError(t, err)
	h := newHarness(t, starlingx.Duplex)
	keys := map[string]bool{}
	h.served("usm release", "/v1/release", keys)
	h.served("sysinv kube_version", "/v1/kube_versions", keys)
	h.served("sysinv ihost", "/v1/ihosts", keys)
	h.served("sysinv isystem", "/v1/isystems", keys)
	h.served("vim current-strategy", "/api/orchestration/current-strategy/strategy", keys)
	ctx := context.Background()
	_, err = h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err)
	st, _ := h.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)
	_, err = h.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		h.step()
	}
	h.served("vim strategy", "/api/orchestration/sw-upgrade/strategy", keys)
	h.served("usm deploy", "/v1/deploy", keys)
	h.served("vim current-strategy", "/api/orchestration/current-strategy/strategy", keys)
	h.waitState(vim.StrategySwUpgrade, vim.StateApplied)
	require.NoError(t, h.client.DeleteStrategy(ctx, vim.StrategySwUpgrade, st.UUID, false))
	_, err = h.client.CreateKubeUpgradeStrategy(ctx, vim.KubeUpgradeRequest{ToVersion: "v1.34.1"})
	require.NoError(t, err)
	st, _ = h.waitState(vim.StrategyKubeUpgrade, vim.StateReadyToApply)
	_, err = h.client.ApplyStrategy(ctx, vim.StrategyKubeUpgrade, st.UUID, nil)
	require.NoError(t, err)
	for i := 0; i < 5; i++ {
		h.step()
	}
	h.served("vim strategy", "/api/orchestration/kube-upgrade/strategy", keys)
	h.served("sysinv kube_upgrade", "/v1/kube_upgrade", keys)

	var missing []string
	for k := range keys {
		if !strings.Contains(string(doc), "| "+k+" |") {
			missing = append(missing, fmt.Sprintf("| %s | <real source> | <test> |", k))
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "fakevim serves fields %s has no row for; find each in the real code and add a row:\n%s",
		conformanceDoc, strings.Join(missing, "\n"))
}
