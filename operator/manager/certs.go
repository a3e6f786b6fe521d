package manager

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	appwebhook "github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
)

// CertRotation generates the webhook server's CA and serving certificate
// in-process and keeps them valid (github.com/open-policy-agent/cert-controller,
// pkg/rotator.CertRotator): the CA and certificate live in Secret, which the
// Deployment mounts at the webhook server's CertDir; the CA is injected as
// the caBundle of the ValidatingWebhookConfiguration ValidatingWebhook (when
// set) and of the ApplicationUpgrade CRD's conversion webhook. The CA lasts
// 10 years and the serving certificate 1 year; both are renewed 90 days
// before they expire (checked every 12 hours), the rotator's defaults.
//
// Every replica runs the rotator (no leader election), so each one waits
// for its own mounted certificate and the injected caBundle before its
// webhook server starts; two replicas racing to fill an empty Secret are
// ordered by the API server's optimistic locking.
type CertRotation struct {
	// Secret holds ca.crt, ca.key, tls.crt and tls.key. It must exist (the
	// chart and deploy/certrotation create it empty); empty Name disables
	// rotation.
	Secret types.NamespacedName
	// DNSName is the Service name the API server dials, e.g.
	// "upgrade-operator-webhook.upgrade-operator-system.svc".
	DNSName string
	// ValidatingWebhook is the ValidatingWebhookConfiguration to inject
	// the CA into; empty when none is installed.
	ValidatingWebhook string
}

// Enabled reports whether in-process rotation is configured.
func (c CertRotation) Enabled() bool { return c.Secret.Name != "" }

// ParseSecretRef parses "<namespace>/<name>".
func ParseSecretRef(s string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("secret reference %q: want <namespace>/<name>", s)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// addCertRotation registers the rotator; it closes ready once this
// replica's certificate is mounted and the CA injected.
func addCertRotation(mgr ctrl.Manager, o WebhookOptions, ready chan struct{}) error {
	r := o.CertRotation
	if r.DNSName == "" {
		return fmt.Errorf("certificate rotation needs the webhook Service's DNS name (--cert-dns-name)")
	}
	webhooks := []rotator.WebhookInfo{{Name: appwebhook.CRDName, Type: rotator.CRDConversion}}
	if r.ValidatingWebhook != "" {
		webhooks = append(webhooks, rotator.WebhookInfo{Name: r.ValidatingWebhook, Type: rotator.Validating})
	}
	certDir := o.CertDir
	if certDir == "" {
		certDir = defaultCertDir
	}
	cr := &rotator.CertRotator{
		SecretKey:      r.Secret,
		CertDir:        certDir,
		CAName:         "upgrade-operator-ca",
		CAOrganization: "upgrade-operator",
		DNSName:        r.DNSName,
		ExtraDNSNames:  []string{strings.TrimSuffix(r.DNSName, ".svc") + ".svc.cluster.local"},
		IsReady:        ready,
		Webhooks:       webhooks,
		// Every replica serves the webhooks, so every replica must see its
		// certificate mounted before it serves.
		RequireLeaderElection: false,
		FieldOwner:            "upgrade-operator-cert-rotator",
	}
	if err := rotator.AddRotator(mgr, cr); err != nil {
		return fmt.Errorf("certificate rotation for secret %s: %w", r.Secret, err)
	}
	return nil
}

// defaultCertDir is controller-runtime's webhook.Options default.
const defaultCertDir = "/tmp/k8s-webhook-server/serving-certs"

// readyServer starts its webhook server only once ready is closed (the
// rotator's certificate is mounted and injected): controller-runtime's
// server reads the certificate when it starts.
type readyServer struct {
	webhook.Server
	ready <-chan struct{}
}

func (s readyServer) Start(ctx context.Context) error {
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil
	}
	return s.Server.Start(ctx)
}

// disableHTTP2 keeps a TLS server on HTTP/1.1: HTTP/2's stream
// multiplexing exposes it to the Rapid Reset and stream-cancellation
// attacks (CVE-2023-44487, CVE-2023-39325); kubebuilder's scaffold turns it
// off the same way.
func disableHTTP2(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }
