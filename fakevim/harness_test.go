package fakevim_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

const password = "s3cr3t-Pa55w0rd!"

var t0 = time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)

type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}
func (c *manualClock) Add(d time.Duration) { c.Set(c.Now().Add(d)) }

// harness is fakevim on one httptest listener, driven by manual model and
// wall clocks, and the operator's client pointed at its Keystone.
type harness struct {
	t      *testing.T
	srv    *fakevim.Server
	hs     *httptest.Server
	model  *manualClock
	wall   *manualClock
	client *vim.HTTPClient
	cfg    vim.Config
	logMu  sync.Mutex
	logs   []string
	sleeps []time.Duration
}

type option func(*starlingx.Config, *fakevim.Options, *vim.Config)

func newHarness(t *testing.T, mode starlingx.SystemMode, opts ...option) *harness {
	t.Helper()
	h := &harness{t: t, model: &manualClock{t: t0}, wall: &manualClock{t: t0}}
	cfg := starlingx.DemoConfig(mode, t0)
	fo := fakevim.Options{Clock: h.model.Now, Wall: h.wall.Now, Password: password, TokenTTL: time.Hour}
	vc := vim.Config{
		Credentials:    vim.Credentials{Username: "admin", Password: password},
		RequestTimeout: 2 * time.Second,
		Log:            funcr.New(h.logLine, funcr.Options{Verbosity: 10}),
		Now:            h.wall.Now,
		Sleep:          h.sleep,
	}
	for _, o := range opts {
		o(&cfg, &fo, &vc)
	}
	m, err := starlingx.New(cfg)
	require.NoError(t, err)
	fo.Model = m
	h.srv, err = fakevim.New(fo)
	require.NoError(t, err)
	h.hs = httptest.NewServer(h.srv.Handler())
	t.Cleanup(h.hs.Close)
	h.srv.SetURLs(fakevim.ServiceURLs{Keystone: h.hs.URL, VIM: h.hs.URL, USM: h.hs.URL, Sysinv: h.hs.URL})
	if vc.Credentials.AuthURL == "" {
		vc.Credentials.AuthURL = h.hs.URL + "/v3"
	}
	h.cfg = vc
	h.client, err = vim.New(vc)
	require.NoError(t, err)
	return h
}

func (h *harness) logLine(prefix, args string) {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	h.logs = append(h.logs, prefix+" "+args)
}

func (h *harness) sleep(done <-chan struct{}, d time.Duration) bool {
	h.logMu.Lock()
	h.sleeps = append(h.sleeps, d)
	h.logMu.Unlock()
	select {
	case <-done:
		return false
	default:
		return true
	}
}

func (h *harness) allLogs() string {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	return strings.Join(h.logs, "\n")
}

// step jumps model time to the model's next event; false when idle.
func (h *harness) step() bool {
	var next time.Time
	var ok bool
	h.srv.WithModel(func(m *starlingx.System, _ time.Time) { next, ok = m.NextEvent() })
	if ok {
		h.model.Set(next)
	}
	return ok
}

// waitState polls the strategy of type typ over HTTP, moving model time
// on between polls, until it is in one of want; it returns every progress
// string seen.
func (h *harness) waitState(typ vim.StrategyType, want ...vim.StrategyState) (*vim.Strategy, []string) {
	h.t.Helper()
	var progress []string
	for i := 0; i < 500; i++ {
		st, err := h.client.GetStrategy(context.Background(), typ)
		require.NoError(h.t, err)
		require.NotNil(h.t, st, "strategy %s vanished", typ)
		if len(progress) == 0 || progress[len(progress)-1] != st.Progress() {
			progress = append(progress, st.Progress())
		}
		for _, w := range want {
			if st.State == w {
				return st, progress
			}
		}
		require.True(h.t, h.step(), "the model stopped with the strategy %s", st.State)
	}
	h.t.Fatalf("strategy %s never reached %v", typ, want)
	return nil, nil
}

// count counts logged requests matching method and path.
func (h *harness) count(method, path string) int { return h.srv.CountRequests(method, path) }

func swReq(release string) vim.SwUpgradeRequest {
	return vim.SwUpgradeRequest{Releases: []string{release}, Delete: true}
}
