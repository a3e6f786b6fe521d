package vim

import (
	"context"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEndpointOfHidesIdentifiers(t *testing.T) {
	for path, want := range map[string]string{
		"/api/orchestration/sw-upgrade/strategy":              "GET /api/orchestration/sw-upgrade/strategy",
		"/api/orchestration/sw-upgrade/strategy/9f1c-44aa-1b": "GET /api/orchestration/sw-upgrade/strategy/{id}",
		"/v1/release/starlingx-13.01.0":                       "GET /v1/release/{id}",
		"/v1/kube_versions/v1.34.1":                           "GET /v1/kube_versions/{id}",
		"/v3/auth/tokens":                                     "GET /v3/auth/tokens",
	} {
		assert.Equal(t, want, endpointOf(http.MethodGet, path), path)
	}
}

// Every attempt is counted by service, endpoint and status code, and
// timed: a GET retried after two 503s is three requests.
func TestRequestsAreCountedAndTimed(t *testing.T) {
	s := newStub(t, func(r *http.Request, n int) (int, string) {
		if n <= 2 {
			return http.StatusServiceUnavailable, `{"faultstring": "busy"}`
		}
		return http.StatusOK, none
	})
	c, _ := s.client(t)
	ep := "GET /api/orchestration/sw-upgrade/strategy"
	before503 := testutil.ToFloat64(requestsTotal.WithLabelValues("vim", ep, "503"))
	before200 := testutil.ToFloat64(requestsTotal.WithLabelValues("vim", ep, "200"))
	beforeTok := testutil.ToFloat64(requestsTotal.WithLabelValues("keystone", "POST /auth/tokens", "201"))
	_, err := c.GetStrategy(context.Background(), StrategySwUpgrade)
	require.NoError(t, err)
	assert.Equal(t, 2.0, testutil.ToFloat64(requestsTotal.WithLabelValues("vim", ep, "503"))-before503)
	assert.Equal(t, 1.0, testutil.ToFloat64(requestsTotal.WithLabelValues("vim", ep, "200"))-before200)
	assert.Equal(t, 1.0, testutil.ToFloat64(requestsTotal.WithLabelValues("keystone", "POST /auth/tokens", "201"))-beforeTok)
	assert.GreaterOrEqual(t, testutil.CollectAndCount(requestDuration), 2)
}
