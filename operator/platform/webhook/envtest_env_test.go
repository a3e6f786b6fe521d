//go:build envtest

package webhook

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

// apiServer is an envtest control plane (etcd + kube-apiserver) with the
// Upgrade CRD and the generated ValidatingWebhookConfiguration installed,
// and a manager serving Validator over TLS.
type apiServer struct {
	c   client.Client
	cfg *rest.Config
}

// startAPIServer starts it for the test; the binaries come from
// KUBEBUILDER_ASSETS or <repo root>/bin (make controlplane).
func startAPIServer(t *testing.T) *apiServer {
	t.Helper()
	root := repoRoot(t)
	env := &envtest.Environment{
		BinaryAssetsDirectory: assetsDir(t, root),
		CRDDirectoryPaths:     []string{filepath.Join(root, "deploy", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{filepath.Join(root, "deploy", "webhook")}},
	}
	cfg, err := env.Start()
	require.NoError(t, err, "start envtest")
	t.Cleanup(func() { _ = env.Stop() })

	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	require.NoError(t, v1alpha1.AddToScheme(scheme))
	wo := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: ctrlwebhook.NewServer(ctrlwebhook.Options{
			Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir,
		}),
	})
	require.NoError(t, err)
	require.NoError(t, (&Validator{}).SetupWithManager(mgr))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool {
		return mgr.GetWebhookServer().StartedChecker()(nil) == nil
	}, 20*time.Second, 50*time.Millisecond, "webhook server did not start")

	c, err := client.New(cfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	return &apiServer{c: c, cfg: cfg}
}

// repoRoot is the directory holding go.mod, above the test's directory.
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// assetsDir is KUBEBUILDER_ASSETS, else <root>/bin; it must hold etcd and kube-apiserver.
func assetsDir(t *testing.T, root string) string {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(root, "bin")
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			t.Fatalf("envtest needs %s in %s: run 'make controlplane' or set KUBEBUILDER_ASSETS to a folder holding etcd and kube-apiserver (%v)", bin, dir, err)
		}
	}
	return dir
}

// reset makes the stored `system` Upgrade have status base+status and spec
// base+from (created when missing); the spec write passes the webhook
// against the base status.
func (s *apiServer) reset(t *testing.T, from func(*v1alpha1.UpgradeSpec), status func(*v1alpha1.UpgradeStatus)) {
	t.Helper()
	ctx := context.Background()
	u := &v1alpha1.Upgrade{}
	if err := s.c.Get(ctx, client.ObjectKey{Name: v1alpha1.SystemName}, u); err != nil {
		require.NoError(t, s.c.Create(ctx, newSystem(baseSpec(), v1alpha1.UpgradeStatus{})), "create system")
		require.NoError(t, s.c.Get(ctx, client.ObjectKey{Name: v1alpha1.SystemName}, u))
	}
	u.Status = baseStatus()
	require.NoError(t, s.c.Status().Update(ctx, u), "reset status")
	u.Spec = baseSpec()
	if from != nil {
		from(&u.Spec)
	}
	require.NoError(t, s.c.Update(ctx, u), "reset spec")
	if status != nil {
		status(&u.Status)
		require.NoError(t, s.c.Status().Update(ctx, u), "set the case's status")
	}
}

// system reads the stored `system` Upgrade.
func (s *apiServer) system(t *testing.T) *v1alpha1.Upgrade {
	t.Helper()
	u := &v1alpha1.Upgrade{}
	require.NoError(t, s.c.Get(context.Background(), client.ObjectKey{Name: v1alpha1.SystemName}, u))
	return u
}
