package opstats

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequestKey(t *testing.T) {
	cases := []struct{ method, url, want string }{
		{"GET", "/api/v1/namespaces/ns/pods?watch=true&resourceVersion=5", "watch pods"},
		{"GET", "/api/v1/pods?limit=500", "list pods"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/web", "get deployments"},
		{"GET", "/apis/apps/v1/deployments?allowWatchBookmarks=true&watch=1", "watch deployments"},
		{"PATCH", "/apis/apps/v1/namespaces/ns/deployments/web", "patch deployments"},
		{"PATCH", "/apis/upgrades.lunadas.dev/v1alpha1/namespaces/ns/applicationupgrades/u/status", "patch applicationupgrades/status"},
		{"POST", "/apis/events.k8s.io/v1/namespaces/ns/events", "create events"},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", "update leases"},
		{"DELETE", "/api/v1/namespaces/ns/pods", "deletecollection pods"},
		{"DELETE", "/api/v1/namespaces/ns", "delete namespaces"},
		{"GET", "/api/v1/namespaces", "list namespaces"},
		{"GET", "/version", "GET /version"},
		{"GET", "/apis", "GET /apis"},
	}
	for _, c := range cases {
		u, err := url.Parse(c.url)
		require.NoError(t, err)
		assert.Equal(t, c.want, RequestKey(c.method, u), "%s %s", c.method, c.url)
	}
	for path, want := range map[string]string{
		"/api/v1/namespaces/ns/pods":                            "ns",
		"/apis/apps/v1/namespaces/a/deployments/web":            "a",
		"/api/v1/namespaces/ns":                                 "",
		"/api/v1/pods":                                          "",
		"/apis/events.k8s.io/v1/namespaces/x/events":            "x",
		"/apis/apps/v1/namespaces/namespaces/deployments/named": "namespaces",
	} {
		assert.Equal(t, want, RequestNamespace(&url.URL{Path: path}), path)
	}
}

func TestCounterWrapsTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	c := NewCounter()
	hc := &http.Client{Transport: c.Wrap(http.DefaultTransport)}
	for _, p := range []string{"/api/v1/pods", "/api/v1/pods", "/api/v1/pods?watch=true"} {
		resp, err := hc.Get(srv.URL + p)
		require.NoError(t, err)
		resp.Body.Close()
	}
	assert.Equal(t, map[string]int64{"list pods": 2, "watch pods": 1}, c.Counts())
	assert.Equal(t, int64(2), Total(c.Counts(), IsWatch))
}

func TestSnapshotReconcilesAndSub(t *testing.T) {
	reg := prometheus.NewRegistry()
	total := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "controller_runtime_reconcile_total"}, []string{"controller", "result"})
	reg.MustRegister(total)
	total.WithLabelValues("applicationupgrade", "success").Add(3)
	total.WithLabelValues("other", "success").Add(7)
	c := NewCounter()
	s := NewSource(c, "applicationupgrade")
	s.Gatherer = reg
	before, err := s.Snapshot()
	require.NoError(t, err)
	assert.Equal(t, int64(3), before.ReconcileTotal())
	assert.False(t, before.Synced)
	total.WithLabelValues("applicationupgrade", "error").Add(1)
	c.add("patch deployments", "ns")
	s.MarkSynced()
	after, err := s.Snapshot()
	require.NoError(t, err)
	d := after.Sub(before)
	assert.Equal(t, map[string]int64{"error": 1}, d.Reconciles)
	assert.Equal(t, map[string]int64{"patch deployments": 1}, d.Requests)
	assert.Equal(t, map[string]int64{"ns": 1}, d.NamespaceRequests)
	assert.True(t, after.Synced)
	h := Hist{Count: 4, Sum: 1, Bounds: []float64{0.01, 0.1, 1}, Cum: []uint64{1, 3, 4}}
	assert.Equal(t, 0.1, h.Quantile(0.5))
	assert.Equal(t, 1.0, h.Quantile(0.99))
	assert.Equal(t, 0.25, h.Mean())
	assert.Equal(t, Hist{Count: 3, Sum: 0.5, Bounds: h.Bounds, Cum: []uint64{0, 2, 3}}, h.Sub(Hist{Count: 1, Sum: 0.5, Cum: []uint64{1, 1, 1}}))
	assert.Positive(t, after.HeapAlloc)
}
