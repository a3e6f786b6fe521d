package fakevim_test

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

func TestTokenRefreshOnceOn401(t *testing.T) {
	h := newHarness(t, starlingx.Simplex)
	ctx := context.Background()
	_, err := h.client.GetStrategy(ctx, vim.StrategySwUpgrade)
	require.NoError(t, err)
	h.srv.ExpireTokens()
	_, err = h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1"))
	require.NoError(t, err, "a 401 fetches a new token and sends the POST again")
	var seen []string
	for _, r := range h.srv.Requests() {
		seen = append(seen, r.Method+" "+r.Path+" "+http.StatusText(r.Status))
	}
	assert.Equal(t, []string{
		"POST /v3/auth/tokens Created",
		"GET /api/orchestration/sw-upgrade/strategy OK",
		"POST /api/orchestration/sw-upgrade/strategy Unauthorized",
		"POST /v3/auth/tokens Created",
		"POST /api/orchestration/sw-upgrade/strategy OK",
	}, seen)
	assert.Contains(t, h.allLogs(), "starlingx token refused, fetching a new one")
}

func TestTokenRefreshedBeforeExpiry(t *testing.T) {
	h := newHarness(t, starlingx.Simplex, func(_ *starlingx.Config, o *fakevim.Options, _ *vim.Config) { o.TokenTTL = 10 * time.Minute })
	ctx := context.Background()
	_, err := h.client.GetSystem(ctx)
	require.NoError(t, err)
	h.wall.Add(8 * time.Minute)
	_, err = h.client.GetSystem(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, h.count(http.MethodPost, "/v3/auth/tokens"), "still fresh")
	h.wall.Add(time.Minute + time.Second) // inside the last tenth of the lifetime
	_, err = h.client.GetSystem(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, h.count(http.MethodPost, "/v3/auth/tokens"), "renewed before it expired")
	for _, r := range h.srv.Requests() {
		assert.NotEqual(t, http.StatusUnauthorized, r.Status)
	}
}

func TestEveryServiceNeedsAToken(t *testing.T) {
	h := newHarness(t, starlingx.Simplex)
	for _, p := range []string{"/api/orchestration/sw-upgrade/strategy", "/api/orchestration/current-strategy/strategy",
		"/v1/release", "/v1/deploy", "/v1/kube_versions", "/v1/kube_upgrade", "/v1/isystems", "/v1/ihosts"} {
		for _, tok := range []string{"", "not-a-token"} {
			req, _ := http.NewRequest(http.MethodGet, h.hs.URL+p, nil)
			if tok != "" {
				req.Header.Set("X-Auth-Token", tok)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, p)
		}
	}
}

func TestWrongPassword(t *testing.T) {
	h := newHarness(t, starlingx.Simplex, func(_ *starlingx.Config, _ *fakevim.Options, c *vim.Config) {
		c.Credentials.Password = "wrong-password"
	})
	_, err := h.client.GetStrategy(context.Background(), vim.StrategySwUpgrade)
	require.True(t, vim.IsUnauthorized(err), "%v", err)
	assert.Contains(t, err.Error(), "keystone")
	assert.Contains(t, err.Error(), "check the Keystone credentials")
	assert.NotContains(t, err.Error(), "wrong-password")
	assert.Equal(t, 1, h.count(http.MethodPost, "/v3/auth/tokens"), "a 401 from Keystone is not retried")
}

// TestSeparateListeners serves each service on its own port, as a real
// system does, and lets the client find them in the catalog.
func TestSeparateListeners(t *testing.T) {
	m, err := starlingx.New(starlingx.DemoConfig(starlingx.Duplex, t0))
	require.NoError(t, err)
	srv, err := fakevim.New(fakevim.Options{Model: m, Password: password, Clock: func() time.Time { return t0 }})
	require.NoError(t, err)
	ks, vs, us, ss := httptest.NewServer(srv.KeystoneHandler()), httptest.NewServer(srv.VIMHandler()),
		httptest.NewServer(srv.USMHandler()), httptest.NewServer(srv.SysinvHandler())
	for _, s := range []*httptest.Server{ks, vs, us, ss} {
		t.Cleanup(s.Close)
	}
	srv.SetURLs(fakevim.ServiceURLs{Keystone: ks.URL, VIM: vs.URL, USM: us.URL, Sysinv: ss.URL})
	c, err := vim.New(vim.Config{Credentials: vim.Credentials{AuthURL: ks.URL, Username: "admin", Password: password, Interface: "public"}})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = c.GetStrategy(ctx, vim.StrategySwUpgrade)
	require.NoError(t, err)
	rels, err := c.ListReleases(ctx, vim.ReleaseQuery{})
	require.NoError(t, err)
	assert.Len(t, rels, 5)
	sys, err := c.GetSystem(ctx)
	require.NoError(t, err)
	assert.Equal(t, "duplex", sys.SystemMode)

	_, err = vim.New(vim.Config{Credentials: vim.Credentials{AuthURL: ks.URL, Username: "admin", Password: password, RegionName: "Elsewhere"}})
	require.NoError(t, err)
	bad, _ := vim.New(vim.Config{Credentials: vim.Credentials{AuthURL: ks.URL, Username: "admin", Password: password, RegionName: "Elsewhere"}})
	_, err = bad.GetSystem(ctx)
	require.ErrorIs(t, err, vim.ErrNoEndpoint)
	assert.False(t, vim.IsUnavailable(err), "a catalog miss is configuration, not an outage")

	explicit, _ := vim.New(vim.Config{Credentials: vim.Credentials{AuthURL: ks.URL, Username: "admin", Password: password, RegionName: "Elsewhere"},
		Endpoints: vim.Endpoints{VIM: vs.URL, USM: us.URL, Sysinv: ss.URL + "/v1"}})
	_, err = explicit.GetSystem(ctx)
	require.NoError(t, err, "explicit endpoints bypass the catalog; a /v1 suffix is dropped")
}

func TestTLSWithCABundle(t *testing.T) {
	m, err := starlingx.New(starlingx.DemoConfig(starlingx.Simplex, t0))
	require.NoError(t, err)
	srv, err := fakevim.New(fakevim.Options{Model: m, Password: password})
	require.NoError(t, err)
	hs := httptest.NewTLSServer(srv.Handler())
	t.Cleanup(hs.Close)
	srv.SetURLs(fakevim.ServiceURLs{Keystone: hs.URL, VIM: hs.URL, USM: hs.URL, Sysinv: hs.URL})
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw})
	creds := vim.Credentials{AuthURL: hs.URL, Username: "admin", Password: password}
	ctx := context.Background()

	good, err := vim.New(vim.Config{Credentials: creds, TLS: vim.TLS{CABundle: ca}})
	require.NoError(t, err)
	_, err = good.GetSystem(ctx)
	require.NoError(t, err)

	strict, err := vim.New(vim.Config{Credentials: creds, Retry: vim.Retry{Attempts: 1}})
	require.NoError(t, err)
	_, err = strict.GetSystem(ctx)
	require.Error(t, err, "verification is on by default")
	assert.Contains(t, err.Error(), "certificate")

	insecure, err := vim.New(vim.Config{Credentials: creds, TLS: vim.TLS{InsecureSkipVerify: true}})
	require.NoError(t, err)
	_, err = insecure.GetSystem(ctx)
	require.NoError(t, err)

	_, err = vim.New(vim.Config{Credentials: creds, TLS: vim.TLS{CABundle: []byte("not pem")}})
	require.Error(t, err)
}
