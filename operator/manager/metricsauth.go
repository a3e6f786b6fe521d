package manager

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// reviewBackoff retries a failed TokenReview or SubjectAccessReview call,
// as k8s.io/apiserver's DefaultAuthWebhookRetryBackoff (and
// controller-runtime's filter, which copies it).
var reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// withAuthenticationAndAuthorization is controller-runtime's
// filters.WithAuthenticationAndAuthorization (v0.25.2,
// pkg/metrics/filters/filters.go: the same delegating authenticator and
// authorizer, caches and retries) with one difference: a token the API
// server rejects (TokenReview status.error, e.g. "invalid bearer token")
// is answered 401 and logged at V(1), as kube-apiserver's own
// authentication filter answers it (k8s.io/apiserver
// pkg/endpoints/filters/authentication.go), instead of 500 with an error
// log and stack trace per request, which let anyone who reaches the pod
// fill the manager's log. A failed SubjectAccessReview call stays 500.
func withAuthenticationAndAuthorization(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationv1.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationv1.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, err
	}
	backoff := reviewBackoff
	authenticator, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                 time.Minute,
		TokenAccessReviewClient:  authn,
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      &backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("metrics authenticator: %w", err)
	}
	backoff2 := reviewBackoff
	authorize, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authz,
		AllowCacheTTL:             5 * time.Minute,
		DenyCacheTTL:              30 * time.Second,
		WebhookRetryBackoff:       &backoff2,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("metrics authorizer: %w", err)
	}
	return func(log logr.Logger, handler http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			res, ok, err := authenticator.AuthenticateRequest(req)
			if err != nil || !ok {
				if err != nil {
					log.V(1).Info("metrics request not authenticated", "error", err.Error())
				}
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			attrs := authorizer.AttributesRecord{User: res.User, Verb: strings.ToLower(req.Method), Path: req.URL.Path}
			decision, reason, err := authorize.Authorize(req.Context(), attrs)
			if err != nil {
				msg := fmt.Sprintf("Authorization for user %s failed", attrs.User.GetName())
				log.Error(err, msg)
				http.Error(w, msg, http.StatusInternalServerError)
				return
			}
			if decision != authorizer.DecisionAllow {
				msg := fmt.Sprintf("Authorization denied for user %s", attrs.User.GetName())
				log.V(4).Info(msg, "reason", reason)
				http.Error(w, msg, http.StatusForbidden)
				return
			}
			handler.ServeHTTP(w, req)
		}), nil
	}, nil
}
