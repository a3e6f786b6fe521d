//go:build e2e

package platforme2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/lunadas/upgrade-operator/scenarios/input/hostile"
)

// testHostile sends the hostile Upgrade patches of scenarios/input/hostile to
// `system` as `kubectl patch --type merge` does (fieldValidation=Strict):
// each is refused with a readable message, and afterwards `system` has the
// spec and generation it had and the VIM was asked for no strategy.
func testHostile(t *testing.T, h *harness) {
	before, err := h.system()
	require.NoError(t, err)
	hc, err := rest.HTTPClientFor(h.cfg)
	require.NoError(t, err)
	url := strings.TrimSuffix(h.cfg.Host, "/") + "/apis/upgrade.starlingx.io/v1alpha1/upgrades/system?fieldValidation=Strict"
	patches := hostile.UpgradePatches()
	require.GreaterOrEqual(t, len(patches), 30)
	for name, patch := range patches {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPatch, url, bytes.NewBufferString(patch))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/merge-patch+json")
			resp, err := hc.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			var st struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(body, &st)
			t.Logf("HTTP %d: %.200s", resp.StatusCode, st.Message)
			require.GreaterOrEqual(t, resp.StatusCode, 400, "refused: %s", body)
			assert.NotEmpty(t, st.Message)
			for _, r := range st.Message {
				assert.False(t, r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)), "raw U+%04X in %q", r, st.Message)
			}
		})
	}
	after, err := h.system()
	require.NoError(t, err)
	assert.Equal(t, before.Generation, after.Generation, "no refused patch was stored")
	assert.Equal(t, before.Spec, after.Spec)
	assert.Empty(t, h.strategyCreates(), "no strategy was created")
	assert.Nil(t, h.fakeState()["strategy"], fmt.Sprint("fakevim: ", h.fakeState()))
}
