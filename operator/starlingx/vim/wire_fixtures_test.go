package vim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wireFixture is one file of testdata/wire (see its README.md).
type wireFixture struct {
	name, source, method, path, kind, state string
	body                                    []byte
}

func loadWireFixtures(t *testing.T) map[string]wireFixture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "wire", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	out := map[string]wireFixture{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		fx := wireFixture{name: strings.TrimSuffix(filepath.Base(f), ".txt")}
		var body bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			line := sc.Text()
			if h, ok := strings.CutPrefix(line, "# "); ok {
				k, v, _ := strings.Cut(h, ": ")
				switch k {
				case "source":
					fx.source = v
				case "request":
					fx.method, fx.path, _ = strings.Cut(v, " ")
				case "kind":
					fx.kind = v
				case "state":
					fx.state = v
				}
				continue
			}
			body.WriteString(line + "\n")
		}
		fx.body = body.Bytes()
		require.True(t, json.Valid(fx.body), "%s: the body is not JSON", f)
		require.NotEmpty(t, fx.source, "%s: no '# source:' line naming the real definition", f)
		require.Contains(t, []string{"request", "response"}, fx.kind, f)
		out[fx.name] = fx
	}
	return out
}

// TestWireFixturesDecode serves every response fixture to the client and
// checks what it decodes, and checks that every request the client sends
// is the request fixture's body.
func TestWireFixturesDecode(t *testing.T) {
	fx := loadWireFixtures(t)
	byPath := map[string]wireFixture{}
	for _, f := range fx {
		if f.kind == "response" && f.state != "sw-aborted-after-failure" { // same path as sw-upgrade-strategy: decoded below
			byPath[f.method+" "+f.path] = f
		}
	}
	var mu sync.Mutex
	sent := map[string]any{}
	s := newStub(t, func(r *http.Request, _ int) (int, string) {
		key := r.Method + " " + r.URL.Path
		if r.Method != http.MethodGet {
			var b any
			_ = json.NewDecoder(r.Body).Decode(&b)
			mu.Lock()
			sent[key] = append(sentList(sent[key]), b)
			mu.Unlock()
			if r.Method == http.MethodDelete {
				return http.StatusOK, ""
			}
			return http.StatusOK, string(fx["sw-upgrade-strategy"].body)
		}
		if f, ok := byPath[key]; ok {
			return http.StatusOK, string(f.body)
		}
		if v, ok := strings.CutPrefix(r.URL.Path, "/v1/kube_versions/"); ok {
			var kv map[string]any
			_ = json.Unmarshal(fx["kube-version-show"].body, &kv)
			kv["version"] = v
			b, _ := json.Marshal(kv)
			return http.StatusOK, string(b)
		}
		return http.StatusNotFound, `{"faultstring": "no fixture for ` + key + `"}`
	})
	c, _ := s.client(t, func(cfg *Config) {
		cfg.Endpoints = Endpoints{VIM: s.hs.URL, USM: s.hs.URL, Sysinv: s.hs.URL}
	})
	ctx := context.Background()

	rels, err := c.ListReleases(ctx, ReleaseQuery{})
	require.NoError(t, err)
	require.Len(t, rels, 2)
	assert.Equal(t, Release{ReleaseID: "starlingx-13.01.2", State: "deploying", SwVersion: "13.01.2", Status: "REL",
		Summary: "second patch", Requires: []string{"starlingx-13.01.1"}, Packages: []string{"sysinv"}}, rels[1])
	rel, err := c.GetRelease(ctx, "starlingx-13.01.2")
	require.NoError(t, err)
	assert.Equal(t, "deploying", rel.State)
	deploys, err := c.ListDeploys(ctx)
	require.NoError(t, err)
	assert.Equal(t, []Deploy{{FromRelease: "13.01.0", ToRelease: "13.01.2", FeedRepo: "/var/www/pages/feed/rel-13.01/ostree_repo",
		CommitID: "4be4ab6bb70c1e1a", State: "host"}}, deploys)
	kubes, err := c.ListKubeVersions(ctx)
	require.NoError(t, err)
	require.Len(t, kubes, 2)
	assert.Equal(t, KubeVersion{Version: "v1.34.1", UpgradeFrom: []string{"v1.33.0"}, DowngradeTo: []string{"v1.33.0"},
		AppliedPatches: []string{}, AvailablePatches: []string{}, Target: true, State: "partial"}, kubes[1])
	ups, err := c.ListKubeUpgrades(ctx)
	require.NoError(t, err)
	assert.Equal(t, []KubeUpgrade{{UUID: "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9", FromVersion: "v1.33.0", ToVersion: "v1.34.1",
		State: "upgrading-first-master"}}, ups)
	sys, err := c.GetSystem(ctx)
	require.NoError(t, err)
	assert.Equal(t, System{UUID: "6c1f4a9e-2b7d-4e3a-9c8f-1a2b3c4d5e6f", Name: "starlingx", SystemType: "Standard",
		SystemMode: "duplex", SoftwareVersion: "13.01"}, *sys)
	hosts, err := c.ListHosts(ctx)
	require.NoError(t, err)
	require.Len(t, hosts, 1)
	assert.True(t, hosts[0].ActiveController())
	cur, err := c.CurrentStrategy(ctx)
	require.NoError(t, err)
	assert.Equal(t, &CurrentStrategy{Name: StrategySwUpgrade, State: StateApplying}, cur)
	sw, err := c.GetStrategy(ctx, StrategySwUpgrade)
	require.NoError(t, err)
	assert.Equal(t, ReleaseList{"starlingx-13.01.2"}, sw.Release)
	assert.Equal(t, "starlingx-13.01.2", sw.ReleaseID)
	assert.Equal(t, StateApplying, sw.State)
	require.Len(t, sw.ApplyPhase.Stages, 1)
	assert.Equal(t, []string{"controller-1"}, sw.ApplyPhase.Stages[0].Steps[0].EntityNames)
	kube, err := c.GetStrategy(ctx, StrategyKubeUpgrade)
	require.NoError(t, err)
	assert.Equal(t, "v1.34.1", kube.KubeTarget(), "read from the stage names: the VIM does not echo to-version")

	// A strategy the VIM aborted after its apply failed: the state is
	// "aborted", the apply phase's result still "failed"
	// (Strategy.phase_complete → _abort), the abort phase holds the
	// unlock of the host the failed stage had locked.
	var q strategyEnvelope
	require.NoError(t, json.Unmarshal(fx["sw-upgrade-strategy-aborted"].body, &q))
	require.NotNil(t, q.Strategy)
	assert.Equal(t, StateAborted, q.Strategy.State)
	assert.Equal(t, ResultFailed, q.Strategy.ApplyPhase.Result)
	assert.Equal(t, "deploy host failed", q.Strategy.ApplyPhase.Reason)
	require.Len(t, q.Strategy.AbortPhase.Stages, 1)
	assert.Equal(t, "sw-upgrade-controllers", q.Strategy.AbortPhase.Stages[0].StageName)
	assert.Equal(t, "unlock-hosts", q.Strategy.AbortPhase.Stages[0].Steps[0].StepName)

	// Requests: the bodies the client sends are the fixtures'.
	_, err = c.CreateSwUpgradeStrategy(ctx, SwUpgradeRequest{Releases: []string{"starlingx-13.01.2"}, Delete: true})
	require.NoError(t, err)
	_, err = c.CreateSwUpgradeStrategy(ctx, SwUpgradeRequest{Releases: []string{}, Rollback: true})
	require.NoError(t, err)
	_, err = c.CreateKubeUpgradeStrategy(ctx, KubeUpgradeRequest{ToVersion: "v1.34.1", ControllerApplyType: ApplySerial})
	require.NoError(t, err)
	_, err = c.AbortStrategy(ctx, StrategySwUpgrade, "", nil)
	require.NoError(t, err)
	require.NoError(t, c.DeleteStrategy(ctx, StrategySwUpgrade, "", true))
	require.NoError(t, c.SwactHost(ctx, "controller-0"))
	want := func(name string) any {
		var v any
		require.NoError(t, json.Unmarshal(fx[name].body, &v))
		return v
	}
	assert.Equal(t, []any{want("sw-upgrade-create.request"), want("sw-upgrade-rollback-create.request")}, sent["POST /api/orchestration/sw-upgrade/strategy"])
	assert.Equal(t, []any{want("kube-upgrade-create.request")}, sent["POST /api/orchestration/kube-upgrade/strategy"])
	assert.Equal(t, []any{want("strategy-abort.request")}, sent["POST /api/orchestration/sw-upgrade/strategy/actions"])
	assert.Equal(t, []any{want("strategy-delete.request")}, sent["DELETE /api/orchestration/sw-upgrade/strategy"])
	assert.Equal(t, []any{want("ihost-swact.request")}, sent["PATCH /v1/ihosts/a1b2c3d4-0000-4000-8000-000000000001"])
}

func sentList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return nil
}
