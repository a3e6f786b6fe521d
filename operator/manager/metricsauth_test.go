package manager

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/rest"
)

// fakeReviewer answers TokenReviews and SubjectAccessReviews as the API
// server does: token "scraper" and "stranger" are ServiceAccounts, any
// other token is rejected with status.error "invalid bearer token" (what
// kube-apiserver sets for a malformed token); only the scraper may get
// /metrics.
func fakeReviewer(t *testing.T, reviews *atomic.Int32) *httptest.Server {
	t.Helper()
	users := map[string]string{"scraper": "system:serviceaccount:monitoring:scraper", "stranger": "system:serviceaccount:tenant-a:default"}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reviews.Add(1)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			var tr authenticationv1.TokenReview
			require.NoError(t, json.NewDecoder(r.Body).Decode(&tr))
			if u, ok := users[tr.Spec.Token]; ok {
				tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: u}}
			} else {
				tr.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
			}
			_ = json.NewEncoder(w).Encode(tr)
		case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			var sar authorizationv1.SubjectAccessReview
			require.NoError(t, json.NewDecoder(r.Body).Decode(&sar))
			nr := sar.Spec.NonResourceAttributes
			sar.Status.Allowed = sar.Spec.User == users["scraper"] && nr != nil && nr.Path == "/metrics" && nr.Verb == "get"
			_ = json.NewEncoder(w).Encode(sar)
		default:
			http.NotFound(w, r)
		}
	}))
}

// A scrape without a token and one with a token the API server rejects are
// both 401 (controller-runtime's filter answers the latter 500); a known
// identity not allowed to get /metrics is 403, the allowed one reaches the
// handler.
func TestMetricsFilterStatuses(t *testing.T) {
	var reviews atomic.Int32
	srv := fakeReviewer(t, &reviews)
	defer srv.Close()
	filter, err := withAuthenticationAndAuthorization(&rest.Config{Host: srv.URL}, srv.Client())
	require.NoError(t, err)
	h, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("upgrade_operator_applicationupgrades 1\n"))
	}))
	require.NoError(t, err)

	for _, tc := range []struct {
		token string
		want  int
	}{
		{"", http.StatusUnauthorized},
		{"not-a-token", http.StatusUnauthorized},
		{"stranger", http.StatusForbidden},
		{"scraper", http.StatusOK},
		{"scraper", http.StatusOK}, // cached: no new review
	} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		assert.Equal(t, tc.want, rec.Code, "token %q: %s", tc.token, rec.Body)
		if tc.want == http.StatusOK {
			assert.Contains(t, rec.Body.String(), "upgrade_operator_")
		} else {
			assert.NotContains(t, rec.Body.String(), "upgrade_operator_")
		}
	}
	// not-a-token, stranger (TokenReview + SAR), scraper (TokenReview + SAR);
	// the second scraper scrape is answered from the caches.
	assert.EqualValues(t, 5, reviews.Load())
}
