package fakevim_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/fakevim"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// wireDir holds the wire fixtures the client's tests decode
// (operator/starlingx/vim TestWireFixturesDecode); see its README.md.
var wireDir = filepath.Join("..", "operator", "starlingx", "vim", "testdata", "wire")

type wireFixture struct {
	name, method, path, kind, state string
	body                            []byte
}

func loadWire(t *testing.T) []wireFixture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(wireDir, "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []wireFixture
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		fx := wireFixture{name: strings.TrimSuffix(filepath.Base(f), ".txt")}
		var body bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if h, ok := strings.CutPrefix(sc.Text(), "# "); ok {
				k, v, _ := strings.Cut(h, ": ")
				switch k {
				case "request":
					fx.method, fx.path, _ = strings.Cut(v, " ")
				case "kind":
					fx.kind = v
				case "state":
					fx.state = v
				}
				continue
			}
			body.WriteString(sc.Text() + "\n")
		}
		fx.body = body.Bytes()
		out = append(out, fx)
	}
	return out
}

// shape compares the structure of two JSON values: the same kind, the same
// object keys, array elements compared through their first element; null
// on either side matches any kind. It returns the differences by JSON path.
func shape(path string, want, got any) []string {
	if want == nil || got == nil {
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: fixture has an object, fakevim %T", path, got)}
		}
		var diffs []string
		for k := range w {
			if _, ok := g[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: in the fixture, not served by fakevim", path, k))
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: served by fakevim, not in the fixture", path, k))
				continue
			}
			diffs = append(diffs, shape(path+"."+k, w[k], g[k])...)
		}
		sort.Strings(diffs)
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: fixture has a list, fakevim %T", path, got)}
		}
		if len(w) > 0 && len(g) > 0 {
			return shape(path+"[0]", w[0], g[0])
		}
		return nil
	default:
		if fmt.Sprintf("%T", want) != fmt.Sprintf("%T", got) {
			return []string{fmt.Sprintf("%s: fixture has %T, fakevim %T", path, want, got)}
		}
		return nil
	}
}

// wireStates builds fakevim in each state the fixtures name.
func wireStates(t *testing.T) map[string]*harness {
	ctx := context.Background()
	sw := newHarness(t, starlingx.Duplex)
	st, err := sw.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.2"))
	require.NoError(t, err)
	sw.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)
	_, err = sw.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		d, err := sw.client.ListDeploys(ctx)
		require.NoError(t, err)
		if len(d) == 1 && d[0].State == "host" {
			break
		}
		require.True(t, sw.step())
	}
	kube := newHarness(t, starlingx.Duplex)
	ks, err := kube.client.CreateKubeUpgradeStrategy(ctx, vim.KubeUpgradeRequest{ToVersion: "v1.34.1"})
	require.NoError(t, err)
	kube.waitState(vim.StrategyKubeUpgrade, vim.StateReadyToApply)
	_, err = kube.client.ApplyStrategy(ctx, vim.StrategyKubeUpgrade, ks.UUID, nil)
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		u, err := kube.client.ListKubeUpgrades(ctx)
		require.NoError(t, err)
		if len(u) == 1 && u[0].State == "upgrading-first-master" {
			break
		}
		require.True(t, kube.step())
	}
	failed := newHarness(t, starlingx.Duplex, func(c *starlingx.Config, _ *fakevim.Options, _ *vim.Config) {
		for i := range c.Releases {
			if c.Releases[i].ID == "starlingx-13.01.2" {
				c.Releases[i].RebootRequired = true
			}
		}
		c.Faults.ApplyFailures = []starlingx.StageFault{{Type: starlingx.SwUpgrade, Step: "upgrade-hosts", Reason: "deploy host failed"}}
	})
	fs, err := failed.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.2"))
	require.NoError(t, err)
	failed.waitState(vim.StrategySwUpgrade, vim.StateReadyToApply)
	_, err = failed.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, fs.UUID, nil)
	require.NoError(t, err)
	got, _ := failed.waitState(vim.StrategySwUpgrade, vim.StateAborted)
	require.Equal(t, vim.ResultFailed, got.ApplyPhase.Result)
	require.Len(t, got.AbortPhase.Stages, 1)
	return map[string]*harness{"sw-applying": sw, "kube-applying": kube, "sw-aborted-after-failure": failed}
}

// TestWireFixturesMatchFakevim asks fakevim every request of the wire
// fixtures in the fixture's state: a response must have the fixture's
// shape, a request body must be accepted. Together with the client's
// TestWireFixturesDecode this ties fakevim's answers to what the client
// decodes, through bodies written from the real definitions.
func TestWireFixturesMatchFakevim(t *testing.T) {
	states := wireStates(t)
	fixtures := loadWire(t)
	sort.Slice(fixtures, func(i, j int) bool { // the delete last: it ends the strategy the others read
		return fixtures[j].method == http.MethodDelete && fixtures[i].method != http.MethodDelete
	})
	for _, fx := range fixtures {
		h := states[fx.state]
		require.NotNil(t, h, "%s: unknown state %q", fx.name, fx.state)
		var want any
		require.NoError(t, json.Unmarshal(fx.body, &want), fx.name)
		switch fx.kind {
		case "response":
			code, body := h.raw(fx.method, fx.path, "")
			require.Equal(t, http.StatusOK, code, "%s: %s", fx.name, body)
			var got any
			require.NoError(t, json.Unmarshal([]byte(body), &got), fx.name)
			assert.Empty(t, shape("$", want, got), "%s: fakevim's %s %s differs from the fixture's shape", fx.name, fx.method, fx.path)
		case "request":
			fresh := newHarness(t, starlingx.Duplex)
			target, path := fresh, fx.path
			switch {
			case strings.HasSuffix(path, "/actions"), fx.method == http.MethodDelete:
				target = h
			case strings.Contains(path, "{uuid}"):
				hosts, err := fresh.client.ListHosts(context.Background())
				require.NoError(t, err)
				path = strings.Replace(path, "{uuid}", hosts[0].UUID, 1)
			}
			code, body := target.raw(fx.method, path, string(fx.body))
			accepted := code < 300 || strings.Contains(body, "Abort rejected")
			assert.True(t, accepted, "%s: fakevim answered %d %s", fx.name, code, body)
		}
	}
}
