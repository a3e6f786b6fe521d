package platformsim_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/scenarios/sim/platformsim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

var t0 = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// pair is the same system twice: one behind fakevim and the HTTP client,
// one behind the direct adapter, on one clock.
type pair struct {
	clock  *clock
	models [2]*starlingx.System
	http   vim.Client
	direct vim.Client
}

func newPair(t *testing.T, mode starlingx.SystemMode) *pair {
	p := &pair{clock: &clock{t: t0}}
	for i := range p.models {
		m, err := starlingx.New(starlingx.DemoConfig(mode, t0))
		require.NoError(t, err)
		p.models[i] = m
	}
	srv, err := fakevim.New(fakevim.Options{Model: p.models[0], Clock: p.clock.Now, Password: "pw"})
	require.NoError(t, err)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	srv.SetURLs(fakevim.ServiceURLs{Keystone: hs.URL, VIM: hs.URL, USM: hs.URL, Sysinv: hs.URL})
	c, err := vim.New(vim.Config{Credentials: vim.Credentials{AuthURL: hs.URL, Username: "admin", Password: "pw"}})
	require.NoError(t, err)
	p.http, p.direct = c, platformsim.NewDirectClient(p.models[1], p.clock.Now)
	return p
}

// step moves the shared clock to the next model event.
func (p *pair) step() bool {
	p.models[1].Advance(p.clock.Now())
	next, ok := p.models[1].NextEvent()
	if ok {
		p.clock.Set(next)
	}
	return ok
}

// same calls fn on both clients and requires equal answers and errors.
func same[T any](t *testing.T, p *pair, what string, fn func(vim.Client) (T, error)) T {
	t.Helper()
	a, errA := fn(p.http)
	b, errB := fn(p.direct)
	require.Equal(t, a, b, what)
	if errA != nil || errB != nil {
		require.Error(t, errA, what)
		require.Error(t, errB, what)
		assert.Equal(t, vim.FaultString(errA), vim.FaultString(errB), what)
		for _, is := range []func(error) bool{vim.IsNotFound, vim.IsConflict, vim.IsBadRequest, vim.IsUnavailable} {
			assert.Equal(t, is(errA), is(errB), what)
		}
	}
	return a
}

func TestAdapterMatchesHTTP(t *testing.T) {
	p := newPair(t, starlingx.Duplex)
	ctx := context.Background()
	observe := func(what string) {
		same(t, p, what+": strategy", func(c vim.Client) (*vim.Strategy, error) { return c.GetStrategy(ctx, vim.StrategySwUpgrade) })
		same(t, p, what+": current", func(c vim.Client) (*vim.CurrentStrategy, error) { return c.CurrentStrategy(ctx) })
		same(t, p, what+": releases", func(c vim.Client) ([]vim.Release, error) { return c.ListReleases(ctx, vim.ReleaseQuery{}) })
		same(t, p, what+": deploys", func(c vim.Client) ([]vim.Deploy, error) { return c.ListDeploys(ctx) })
		same(t, p, what+": kube versions", func(c vim.Client) ([]vim.KubeVersion, error) { return c.ListKubeVersions(ctx) })
		same(t, p, what+": kube upgrades", func(c vim.Client) ([]vim.KubeUpgrade, error) { return c.ListKubeUpgrades(ctx) })
		same(t, p, what+": hosts", func(c vim.Client) ([]vim.Host, error) { return c.ListHosts(ctx) })
		same(t, p, what+": system", func(c vim.Client) (*vim.System, error) { return c.GetSystem(ctx) })
	}
	observe("start")
	st := same(t, p, "create", func(c vim.Client) (*vim.Strategy, error) {
		return c.CreateSwUpgradeStrategy(ctx, vim.SwUpgradeRequest{Releases: []string{"starlingx-13.01.2"}, Delete: true})
	})
	same(t, p, "second create", func(c vim.Client) (*vim.Strategy, error) {
		return c.CreateKubeUpgradeStrategy(ctx, vim.KubeUpgradeRequest{ToVersion: "v1.34.1"})
	})
	same(t, p, "delete while building", func(c vim.Client) (bool, error) {
		return false, c.DeleteStrategy(ctx, vim.StrategySwUpgrade, st.UUID, false)
	})
	same(t, p, "apply while building", func(c vim.Client) (*vim.Strategy, error) {
		return c.ApplyStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	})
	for i := 0; i < 3; i++ {
		p.step()
	}
	observe("built")
	same(t, p, "stale apply", func(c vim.Client) (*vim.Strategy, error) {
		return c.ApplyStrategy(ctx, vim.StrategySwUpgrade, "00000000-0000-4000-8000-000000000000", nil)
	})
	same(t, p, "apply", func(c vim.Client) (*vim.Strategy, error) {
		return c.ApplyStrategy(ctx, vim.StrategySwUpgrade, st.UUID, nil)
	})
	for i := 0; p.step(); i++ {
		if i%4 == 0 {
			observe("applying")
		}
	}
	observe("applied")
	same(t, p, "delete", func(c vim.Client) (bool, error) {
		return true, c.DeleteStrategy(ctx, vim.StrategySwUpgrade, st.UUID, false)
	})
	same(t, p, "delete none", func(c vim.Client) (bool, error) { return true, c.DeleteStrategy(ctx, vim.StrategySwUpgrade, "", false) })
	same(t, p, "swact standby", func(c vim.Client) (bool, error) { return true, c.SwactHost(ctx, "controller-1") })
	same(t, p, "missing release", func(c vim.Client) (*vim.Release, error) { return c.GetRelease(ctx, "starlingx-1.1.1") })
	same(t, p, "major releases", func(c vim.Client) ([]vim.Release, error) {
		return c.ListReleases(ctx, vim.ReleaseQuery{Release: "starlingx-27.03.0"})
	})
}
