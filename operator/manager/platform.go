package manager

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	platformcontroller "github.com/lunadas/upgrade-operator/operator/platform/controller"
	platformwebhook "github.com/lunadas/upgrade-operator/operator/platform/webhook"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

// PlatformOptions configure the platform Upgrade controller (StarlingX
// sw-deploy / kube-upgrade orchestration through the VIM), its bootstrap
// of the `system` Upgrade and the Upgrade admission webhook.
type PlatformOptions struct {
	// Enabled turns the platform controller and webhook on.
	Enabled bool
	// VIM is the StarlingX client; nil builds the HTTP client from the
	// fields below (tests inject one).
	VIM vim.Client
	// CredentialsSecret holds the Keystone credentials as the openrc
	// variables (OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, ...).
	// Reading it through the API needs get on that one Secret (a namespaced
	// Role the deployer grants); the Helm chart mounts it instead
	// (CredentialsDir), so the operator holds no Secret read at all.
	CredentialsSecret types.NamespacedName
	// CredentialsDir is a mounted Secret: one file per openrc variable.
	// It takes precedence over CredentialsSecret.
	CredentialsDir string
	// Endpoints are explicit VIM / USM / sysinv URLs; empty ones come from
	// the Keystone catalog.
	Endpoints vim.Endpoints
	// CABundleFile is a PEM file of CAs trusted for the StarlingX APIs.
	CABundleFile string
	// InsecureSkipVerify disables TLS verification of the StarlingX APIs.
	InsecureSkipVerify bool
	// RequestTimeout bounds each StarlingX request; 0 is the client's default.
	RequestTimeout time.Duration
	// PollInterval, IdlePollInterval and MaxBuildRetries tune the
	// controller; 0 means its defaults.
	PollInterval, IdlePollInterval time.Duration
	MaxBuildRetries                int
}

// WebhookOptions say where the manager serves its webhooks (TLS).
type WebhookOptions struct {
	// Host and Port are the listen address; Port 0 means 9443.
	Host string
	Port int
	// CertDir holds tls.crt and tls.key; empty means controller-runtime's
	// default (<tmp>/k8s-webhook-server/serving-certs).
	CertDir string
	// AppUpgrade serves the ApplicationUpgrade conversion webhook
	// (/convert, v1alpha1 ⇄ v1beta1) and its validating admission webhook.
	// The binary turns it on (--appupgrade-webhooks, default true): the
	// in-cluster CRD's conversion points at this server. Off by default
	// here, so in-process test managers need no certificates (their
	// harness serves /convert, see scenarios/real/realcluster.LocalConversion).
	AppUpgrade bool
	// SelfSigned, for a manager run outside the cluster (make run), writes
	// a fresh self-signed serving certificate for Host (127.0.0.1 when
	// empty) into CertDir (a new temporary directory when empty) and points
	// the ApplicationUpgrade CRD's conversion at https://Host:Port/convert
	// with its CA. It needs update on customresourcedefinitions, which the
	// in-cluster RBAC does not grant. Implies AppUpgrade.
	SelfSigned bool
	// CertRotation, when enabled, generates and rotates the serving
	// certificate in-process (cert-controller) and injects its CA; the
	// server then starts once this replica's certificate is mounted.
	CertRotation CertRotation
	// EnableHTTP2 serves HTTP/2 as well as HTTP/1.1; off by default
	// (disableHTTP2).
	EnableHTTP2 bool
}

// webhookServer is the webhook server for o; with certificate rotation it
// starts once ready is closed.
func webhookServer(o WebhookOptions, ready <-chan struct{}) webhook.Server {
	wo := webhook.Options{Host: o.Host, Port: o.Port, CertDir: o.CertDir}
	if !o.EnableHTTP2 {
		wo.TLSOpts = []func(*tls.Config){disableHTTP2}
	}
	s := webhook.NewServer(wo)
	if ready != nil {
		return readyServer{Server: s, ready: ready}
	}
	return s
}

// setupPlatform registers the platform Upgrade controller (leader only,
// with the bootstrap) and its webhook (served by every replica).
func setupPlatform(ctx context.Context, mgr ctrl.Manager, o PlatformOptions, leaseHeld func() error) error {
	c := o.VIM
	if c == nil {
		var err error
		if c, err = newVIMClient(ctx, mgr, o); err != nil {
			return err
		}
	}
	for _, c := range vim.Collectors() {
		if err := crmetrics.Registry.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return fmt.Errorf("register starlingx request metrics: %w", err)
		}
	}
	r := &platformcontroller.UpgradeReconciler{
		Client: mgr.GetClient(), VIM: c, Clock: clock.RealClock{}, Recorder: mgr.GetEventRecorder("upgrade-operator"),
		PollInterval: o.PollInterval, IdlePollInterval: o.IdlePollInterval, MaxBuildRetries: o.MaxBuildRetries,
		LeaseHeld: leaseHeld,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	return (&platformwebhook.Validator{}).SetupWithManager(mgr)
}

// newVIMClient reads the credentials Secret (directly, the cache is not
// started yet) and builds the HTTP client.
func newVIMClient(ctx context.Context, mgr ctrl.Manager, o PlatformOptions) (vim.Client, error) {
	data, source, err := credentialData(ctx, mgr, o)
	if err != nil {
		return nil, err
	}
	creds, err := vim.CredentialsFromSecret(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	cfg := vim.Config{Credentials: creds, Endpoints: o.Endpoints, RequestTimeout: o.RequestTimeout,
		TLS: vim.TLS{InsecureSkipVerify: o.InsecureSkipVerify}, Log: ctrl.Log.WithName("starlingx")}
	if o.CABundleFile != "" {
		if cfg.TLS.CABundle, err = os.ReadFile(o.CABundleFile); err != nil {
			return nil, fmt.Errorf("read the StarlingX CA bundle: %w", err)
		}
	}
	c, err := vim.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("starlingx client: %w", err)
	}
	return c, nil
}

// credentialData reads the openrc variables from CredentialsDir (a mounted
// Secret: one file per key) or, failing that, from CredentialsSecret through
// the API. source names where they came from, for errors.
func credentialData(ctx context.Context, mgr ctrl.Manager, o PlatformOptions) (data map[string][]byte, source string, err error) {
	if o.CredentialsDir != "" {
		entries, err := os.ReadDir(o.CredentialsDir)
		if err != nil {
			return nil, "", fmt.Errorf("read the Keystone credentials directory: %w", err)
		}
		data = map[string][]byte{}
		for _, e := range entries {
			if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue // the kubelet's ..data symlinks
			}
			if data[e.Name()], err = os.ReadFile(filepath.Join(o.CredentialsDir, e.Name())); err != nil {
				return nil, "", fmt.Errorf("read the Keystone credentials directory: %w", err)
			}
		}
		return data, "credentials directory " + o.CredentialsDir, nil
	}
	if o.CredentialsSecret.Name == "" || o.CredentialsSecret.Namespace == "" {
		return nil, "", fmt.Errorf("platform upgrades need Keystone credentials: set --starlingx-credentials-dir (a mounted Secret) or --starlingx-credentials-secret <namespace>/<name>")
	}
	var s corev1.Secret
	if err := mgr.GetAPIReader().Get(ctx, o.CredentialsSecret, &s); err != nil {
		return nil, "", fmt.Errorf("read the Keystone credentials secret %s: %w", o.CredentialsSecret, err)
	}
	return s.Data, "secret " + o.CredentialsSecret.String(), nil
}
