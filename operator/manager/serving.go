package manager

import (
	"crypto/tls"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// MetricsOptions say how the metrics endpoint (Options.MetricsAddr) is
// served.
type MetricsOptions struct {
	// Secure serves HTTPS and lets a request through only when its bearer
	// token authenticates (TokenReview; else 401) and may get the
	// non-resource URL /metrics (SubjectAccessReview; else 403):
	// controller-runtime's filters.WithAuthenticationAndAuthorization, a
	// rejected token answered 401 (withAuthenticationAndAuthorization).
	// Needs create on tokenreviews and subjectaccessreviews (a ClusterRole).
	Secure bool
	// CertDir holds tls.crt / tls.key for Secure; empty: a self-signed
	// certificate generated at start (controller-runtime's default).
	CertDir string
	// EnableHTTP2 serves HTTP/2 on the secure endpoint; off by default.
	EnableHTTP2 bool
}

func metricsOptions(o Options) metricsserver.Options {
	m := metricsserver.Options{BindAddress: o.MetricsAddr}
	if !o.Metrics.Secure {
		return m
	}
	m.SecureServing = true
	m.CertDir = o.Metrics.CertDir
	m.FilterProvider = withAuthenticationAndAuthorization
	if !o.Metrics.EnableHTTP2 {
		m.TLSOpts = []func(*tls.Config){disableHTTP2}
	}
	return m
}

// servesWebhooks reports whether any webhook is registered on the server
// (conversion, ApplicationUpgrade or platform admission).
func servesWebhooks(o Options) bool {
	return o.Webhook.AppUpgrade || o.Webhook.SelfSigned || o.Platform.Enabled
}

// addProbes: /healthz always answers; /readyz also needs the webhook
// server to accept TLS connections when this manager serves webhooks, so
// a replica joins the webhook Service only once it can answer admission
// and conversion requests.
func addProbes(mgr ctrl.Manager, o Options) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("add ready check: %w", err)
	}
	if servesWebhooks(o) {
		if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return fmt.Errorf("add webhook ready check: %w", err)
		}
	}
	return nil
}
