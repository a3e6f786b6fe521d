package vim

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stub is a minimal Keystone plus one service whose answers the test
// scripts, for the client's transport behaviour in isolation.
type stub struct {
	mu       sync.Mutex
	tokens   int
	calls    map[string]int
	answer   func(r *http.Request, n int) (int, string)
	hs       *httptest.Server
	ttl      time.Duration
	issuedAt time.Time
}

func newStub(t *testing.T, answer func(r *http.Request, n int) (int, string)) *stub {
	s := &stub{calls: map[string]int{}, answer: answer, ttl: time.Hour}
	s.hs = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.hs.Close)
	return s
}

func (s *stub) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if r.URL.Path == "/v3/auth/tokens" {
		s.tokens++
		n := s.tokens
		s.mu.Unlock()
		w.Header().Set("X-Subject-Token", "tok-"+string(rune('a'+n)))
		w.WriteHeader(http.StatusCreated)
		now := time.Now().UTC()
		_ = json.NewEncoder(w).Encode(map[string]any{"token": map[string]any{
			"issued_at": now.Format(time.RFC3339Nano), "expires_at": now.Add(s.ttl).Format(time.RFC3339Nano),
			"catalog": []map[string]any{{"type": "nfv", "name": "vim", "endpoints": []map[string]string{
				{"interface": "internal", "region": "RegionOne", "url": s.hs.URL}}}}}})
		return
	}
	key := r.Method + " " + r.URL.Path
	s.calls[key]++
	n := s.calls[key]
	s.mu.Unlock()
	status, body := s.answer(r, n)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func (s *stub) client(t *testing.T, mutate ...func(*Config)) (*HTTPClient, *[]time.Duration) {
	var sleeps []time.Duration
	cfg := Config{Credentials: Credentials{AuthURL: s.hs.URL, Username: "u", Password: "p"},
		Sleep: func(_ <-chan struct{}, d time.Duration) bool { sleeps = append(sleeps, d); return true }}
	for _, m := range mutate {
		m(&cfg)
	}
	c, err := New(cfg)
	require.NoError(t, err)
	return c, &sleeps
}

const none = `{"strategy": null}`

func TestGetsRetryWithBackoffPostsDoNot(t *testing.T) {
	s := newStub(t, func(r *http.Request, n int) (int, string) {
		if n <= 4 {
			return http.StatusServiceUnavailable, `{"faultstring": "busy"}`
		}
		return http.StatusOK, none
	})
	c, sleeps := s.client(t, func(c *Config) { c.Retry = Retry{Attempts: 6, Initial: time.Second, Factor: 3, Max: 5 * time.Second} })
	st, err := c.GetStrategy(context.Background(), StrategySwUpgrade)
	require.NoError(t, err)
	assert.Nil(t, st)
	assert.Equal(t, []time.Duration{time.Second, 3 * time.Second, 5 * time.Second, 5 * time.Second}, *sleeps)

	_, err = c.CreateKubeUpgradeStrategy(context.Background(), KubeUpgradeRequest{ToVersion: "v1.34.1"})
	require.True(t, IsUnavailable(err))
	assert.Equal(t, 1, s.calls["POST /api/orchestration/kube-upgrade/strategy"])
	assert.Contains(t, err.Error(), "vim: create kube-upgrade strategy to v1.34.1: POST /api/orchestration/kube-upgrade/strategy: 503 Service Unavailable: busy; the service is unavailable: retry later")
}

func TestCancelledContextStopsRetries(t *testing.T) {
	s := newStub(t, func(*http.Request, int) (int, string) { return http.StatusBadGateway, "" })
	ctx, cancel := context.WithCancel(context.Background())
	c, _ := s.client(t, func(c *Config) {
		c.Sleep = func(<-chan struct{}, time.Duration) bool { cancel(); return false }
	})
	_, err := c.GetStrategy(ctx, StrategySwUpgrade)
	require.True(t, IsUnavailable(err))
	assert.Equal(t, 1, s.calls["GET /api/orchestration/sw-upgrade/strategy"])
}

func TestPerAttemptTimeout(t *testing.T) {
	s := newStub(t, func(r *http.Request, n int) (int, string) {
		if n == 1 {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
		}
		return http.StatusOK, none
	})
	c, sleeps := s.client(t, func(c *Config) { c.RequestTimeout = 50 * time.Millisecond })
	_, err := c.GetStrategy(context.Background(), StrategySwUpgrade)
	require.NoError(t, err)
	assert.Len(t, *sleeps, 1)
}

func TestPersistent401IsUnauthorizedAfterOneRefresh(t *testing.T) {
	s := newStub(t, func(*http.Request, int) (int, string) { return http.StatusUnauthorized, `{"error":{"message":"nope"}}` })
	c, _ := s.client(t)
	_, err := c.GetStrategy(context.Background(), StrategySwUpgrade)
	require.True(t, IsUnauthorized(err), "%v", err)
	assert.Equal(t, 2, s.tokens, "one refresh, not a loop")
	assert.Equal(t, 2, s.calls["GET /api/orchestration/sw-upgrade/strategy"])
}

func TestActionBodiesAndDeleteForce(t *testing.T) {
	var bodies []map[string]any
	var mu sync.Mutex
	s := newStub(t, func(r *http.Request, _ int) (int, string) {
		if r.Method != http.MethodGet {
			var b map[string]any
			_ = json.NewDecoder(r.Body).Decode(&b)
			mu.Lock()
			bodies = append(bodies, b)
			mu.Unlock()
		}
		if r.Method == http.MethodDelete {
			return http.StatusNoContent, ""
		}
		return http.StatusAccepted, `{"strategy": {"uuid": "u1", "name": "kube-upgrade", "state": "applying"}}`
	})
	c, _ := s.client(t)
	ctx := context.Background()
	two := 2
	_, err := c.ApplyStrategy(ctx, StrategyKubeUpgrade, "", nil)
	require.NoError(t, err)
	_, err = c.ApplyStrategy(ctx, StrategyKubeUpgrade, "", &two)
	require.NoError(t, err)
	_, err = c.AbortStrategy(ctx, StrategyKubeUpgrade, "", nil)
	require.NoError(t, err)
	_, err = c.AbortStrategy(ctx, StrategyKubeUpgrade, "", &two)
	require.NoError(t, err)
	require.NoError(t, c.DeleteStrategy(ctx, StrategyKubeUpgrade, "", true))
	assert.Equal(t, []map[string]any{
		{"action": "apply-all"}, {"action": "apply-stage", "stage-id": 2.0},
		{"action": "abort"}, {"action": "abort-stage", "stage-id": 2.0}, {"force": true},
	}, bodies)
}

func TestCreateBodies(t *testing.T) {
	var got []map[string]any
	s := newStub(t, func(r *http.Request, _ int) (int, string) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		got = append(got, b)
		return http.StatusOK, `{"strategy": {"uuid": "u", "name": "sw-upgrade", "state": "building"}}`
	})
	c, _ := s.client(t)
	_, err := c.CreateSwUpgradeStrategy(context.Background(), SwUpgradeRequest{Releases: []string{"starlingx-13.01.1"}, Delete: true})
	require.NoError(t, err)
	_, err = c.CreateKubeUpgradeStrategy(context.Background(), KubeUpgradeRequest{ToVersion: "v1.34.1", MaxParallelWorkerHosts: 4})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"release": []any{"starlingx-13.01.1"}, "controller-apply-type": "serial", "storage-apply-type": "serial",
		"worker-apply-type": "serial", "default-instance-action": "stop-start", "alarm-restrictions": "strict",
		"rollback": false, "delete": true}, got[0], "the fields nfv-client sends")
	assert.Equal(t, map[string]any{"to-version": "v1.34.1", "controller-apply-type": "serial", "storage-apply-type": "serial",
		"worker-apply-type": "serial", "max-parallel-worker-hosts": 4.0, "default-instance-action": "stop-start",
		"alarm-restrictions": "strict"}, got[1])
}

func TestConfigErrors(t *testing.T) {
	_, err := New(Config{Credentials: Credentials{AuthURL: "http://k:5000"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fill them from the Keystone Secret")
	cfg := Config{Credentials: Credentials{AuthURL: "http://k:5000/", Username: "u", Password: "p"}}
	require.NoError(t, cfg.defaults())
	assert.Equal(t, "http://k:5000/v3", cfg.Credentials.AuthURL)
	assert.Equal(t, "internal", cfg.Credentials.Interface)
	assert.Equal(t, 40*time.Second, cfg.RequestTimeout)
}

func TestListDeploysShapes(t *testing.T) {
	for body, want := range map[string]int{
		`[]`:   0,
		`null`: 0,
		`{}`:   0,
		`[{"from_release": "13.01.0", "to_release": "13.01.1", "state": "start-done"}]`: 1,
		`{"from_release": "13.01.0", "to_release": "13.01.1", "state": "host"}`:         1,
	} {
		s := newStub(t, func(*http.Request, int) (int, string) { return http.StatusOK, body })
		c, _ := s.client(t, func(c *Config) { c.Endpoints.USM = s.hs.URL })
		got, err := c.ListDeploys(context.Background())
		require.NoError(t, err, body)
		assert.Len(t, got, want, body)
	}
}
