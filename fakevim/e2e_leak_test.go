package fakevim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// TestCredentialsNeverLeak drives the client through success and every
// kind of failure and greps everything it logged and every error it
// returned, in every format, for the password and the tokens.
func TestCredentialsNeverLeak(t *testing.T) {
	h := newHarness(t, starlingx.Duplex)
	ctx := context.Background()
	var errs []error
	keep := func(_ any, err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}

	keep(h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1")))
	keep(h.client.CreateSwUpgradeStrategy(ctx, swReq("starlingx-13.01.1")))     // 409
	keep(h.client.ApplyStrategy(ctx, vim.StrategySwUpgrade, "", nil))           // 500
	keep(h.client.AbortStrategy(ctx, vim.StrategySwUpgrade, "", nil))           // 400
	keep(nil, h.client.DeleteStrategy(ctx, vim.StrategyKubeUpgrade, "", false)) // 404
	keep(h.client.GetRelease(ctx, "starlingx-00.00.0"))                         // 404
	keep(nil, h.client.SwactHost(ctx, "controller-1"))                          // 400
	h.srv.ExpireTokens()
	keep(h.client.ListKubeVersions(ctx)) // 401, refresh
	h.srv.ApplyFaults(fakevim.FaultRequest{UnavailableNext: 20})
	keep(h.client.GetSystem(ctx))       // 503 ×5
	keep(h.client.CurrentStrategy(ctx)) // 503 ×5
	h.srv.ApplyFaults(fakevim.FaultRequest{Reset: true, ExpireTokens: true, UnavailableNext: 1, Services: []string{"keystone"}})
	keep(h.client.ListHosts(ctx)) // 401, then a 503 from Keystone, retried
	h.srv.ApplyFaults(fakevim.FaultRequest{Reset: true})

	wrong := h.cfg
	wrong.Credentials.Password = vim.Secret(password + "-but-wrong")
	wc, err := vim.New(wrong)
	require.NoError(t, err)
	keep(wc.GetStrategy(ctx, vim.StrategySwUpgrade))

	closed := h.cfg
	closed.Credentials.AuthURL = "http://" + closedAddr(t) + "/v3"
	cc, err := vim.New(closed)
	require.NoError(t, err)
	keep(cc.GetSystem(ctx))

	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error": {"code": 401, "message": "bad credentials in %s"}}`, strings.ReplaceAll(string(b), `"`, `'`))
	}))
	defer echo.Close()
	echoing := h.cfg
	echoing.Credentials.AuthURL = echo.URL
	ec, err := vim.New(echoing)
	require.NoError(t, err)
	keep(ec.GetSystem(ctx))

	require.Len(t, errs, 11)
	tokens := issuedTokens(h)
	require.NotEmpty(t, tokens)
	var texts []string
	for _, e := range errs {
		texts = append(texts, e.Error(), fmt.Sprintf("%v|%+v|%#v|%s|%q", e, e, e, e, e))
	}
	assert.Contains(t, strings.Join(texts, "\n"), "[redacted]", "the echoed password was scrubbed, not dropped")
	logs := h.allLogs()
	require.Contains(t, logs, "starlingx request")
	for name, text := range map[string]string{"logs": logs, "errors": strings.Join(texts, "\n"), "config": formatConfig(h.cfg)} {
		assert.NotContains(t, text, password, "the password leaked into the %s", name)
		for _, tok := range tokens {
			assert.NotContains(t, text, tok, "a token leaked into the %s", name)
		}
	}
}

func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// issuedTokens returns a fresh token and the prefix every fakevim token
// shares, so any token in a text shows up.
func issuedTokens(h *harness) []string {
	body := `{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"admin","password":"` + password +
		`","domain":{"name":"Default"}}}},"scope":{"project":{"name":"admin","domain":{"name":"Default"}}}}}`
	resp, err := http.Post(h.hs.URL+"/v3/auth/tokens", "application/json", strings.NewReader(body))
	require.NoError(h.t, err)
	resp.Body.Close()
	tok := resp.Header.Get("X-Subject-Token")
	require.True(h.t, strings.HasPrefix(tok, "gAAAAA"))
	return []string{tok, "gAAAAA"}
}

// formatConfig prints the client configuration every way a careless
// caller might log it.
func formatConfig(cfg vim.Config) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%v\n%+v\n%#v\n%v\n%s\n", cfg.Credentials, cfg.Credentials, cfg.Credentials, cfg.Credentials.Password, cfg.Credentials.Password)
	j, _ := json.Marshal(cfg.Credentials)
	b.Write(j)
	slog.New(slog.NewJSONHandler(&b, nil)).Info("config", "credentials", cfg.Credentials, "password", cfg.Credentials.Password)
	slog.New(slog.NewTextHandler(&b, nil)).Info("config", "credentials", cfg.Credentials, "password", cfg.Credentials.Password)
	return b.String()
}
