package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lunadas/upgrade-operator/operator/manager"
)

// addServingFlags binds the flags of the webhook certificate rotation, the
// metrics endpoint's security and HTTP/2.
func addServingFlags(cmd *cobra.Command, opts *manager.Options, certSecret *string) {
	f := cmd.Flags()
	r := &opts.Webhook.CertRotation
	f.StringVar(certSecret, "cert-rotation-secret", "", "<namespace>/<name> of a Secret (created empty) in which the manager generates and rotates the webhook server's CA and certificate, injecting the CA into the ApplicationUpgrade CRD's conversion and --cert-validating-webhook; the Secret must be mounted at --webhook-cert-dir. Empty: certificates come from elsewhere (cert-manager)")
	f.StringVar(&r.DNSName, "cert-dns-name", "", "DNS name of the webhook Service the certificate is issued for, e.g. upgrade-operator-webhook.upgrade-operator-system.svc (with --cert-rotation-secret)")
	f.StringVar(&r.ValidatingWebhook, "cert-validating-webhook", "", "ValidatingWebhookConfiguration whose caBundle the rotator keeps current (with --cert-rotation-secret); empty: none")
	f.BoolVar(&opts.Webhook.EnableHTTP2, "webhook-enable-http2", false, "serve HTTP/2 on the webhook server (off: HTTP/1.1 only, against HTTP/2 stream attacks)")
	f.BoolVar(&opts.Metrics.Secure, "metrics-secure", false, "serve metrics over HTTPS, only to bearer tokens allowed to get /metrics (TokenReview + SubjectAccessReview)")
	f.StringVar(&opts.Metrics.CertDir, "metrics-cert-dir", "", "tls.crt / tls.key for --metrics-secure; empty: a self-signed certificate generated at start")
	f.BoolVar(&opts.Metrics.EnableHTTP2, "metrics-enable-http2", false, "serve HTTP/2 on the secure metrics endpoint")
}

// certFlags completes the rotation options once parsed.
func certFlags(opts *manager.Options, certSecret string) error {
	r := &opts.Webhook.CertRotation
	if certSecret == "" {
		if r.DNSName != "" || r.ValidatingWebhook != "" {
			return fmt.Errorf("--cert-dns-name and --cert-validating-webhook need --cert-rotation-secret")
		}
		return nil
	}
	ref, err := manager.ParseSecretRef(certSecret)
	if err != nil {
		return fmt.Errorf("--cert-rotation-secret: %w", err)
	}
	if r.DNSName == "" {
		return fmt.Errorf("--cert-rotation-secret needs --cert-dns-name (the webhook Service's DNS name)")
	}
	r.Secret = ref
	return nil
}
