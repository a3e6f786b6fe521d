//go:build envtest

package v1alpha1_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	appwebhook "github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
)

// TestEnvtestPropertyMixedVersionWritesNeverLoseData is the property test
// on a real kube-apiserver and etcd: the CRDs of deploy/crd/bases, the
// admission webhooks of deploy/webhook (matchPolicy Equivalent, so a
// v1alpha1 write reaches the validator converted) and the product's
// validator and conversion webhook registered as the manager registers
// them (Validator.SetupWithManager), the SubjectAccessReviewer included.
// 150 random graphs × 10 writes through both versions' clients.
func TestEnvtestPropertyMixedVersionWritesNeverLoseData(t *testing.T) {
	s := startWebhookedAPIServer(t)
	checkMixedVersionWrites(t, s, *propertySeed, 150, 10,
		"make test-envtest (or go test -tags envtest ./operator/api/upgrades/v1alpha1 -run TestEnvtestProperty)")
}

func propertyScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1alpha1.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	return s
}

// apiStore is graphStore on the API server, in one namespace.
type apiStore struct {
	ctx context.Context
	c   client.Client
	ns  string
}

func startWebhookedAPIServer(t *testing.T) *apiStore {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join("..", "..", "..", "..", "bin")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	scheme := propertyScheme()
	env := &envtest.Environment{
		Scheme:                   scheme,
		CRDDirectoryPaths:        []string{filepath.Join("..", "..", "..", "..", "deploy", "crd", "bases")},
		ErrorIfCRDPathMissing:    true,
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
		WebhookInstallOptions: envtest.WebhookInstallOptions{LocalServingHost: "127.0.0.1", LocalServingPort: port,
			Paths: []string{filepath.Join("..", "..", "..", "..", "deploy", "webhook")}},
	}
	cfg, err := env.Start()
	require.NoError(t, err, "start etcd and kube-apiserver from %s (run 'make controlplane')", assets)
	t.Cleanup(func() { _ = env.Stop() })

	// Errors only: 1,500 admissions would otherwise log a line each.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	o := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir})})
	require.NoError(t, err)
	v := &appwebhook.Validator{Reader: mgr.GetClient(), AllowCrossNamespaceRefs: true,
		Authorizer: appwebhook.SubjectAccessReviewer{Client: mgr.GetClient()}}
	require.NoError(t, v.SetupWithManager(mgr))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	started := mgr.GetWebhookServer().StartedChecker()
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return started(nil) == nil, nil
	}))

	c, err := client.New(cfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	s := &apiStore{ctx: t.Context(), c: c, ns: "property"}
	for _, ns := range []string{s.ns, "other"} {
		require.NoError(t, c.Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	// The validator serves once its cache has synced: wait for a create
	// that it refuses (an empty graph) before the property runs.
	require.NoError(t, wait.PollUntilContextTimeout(s.ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "probe"}}, client.DryRunAll)
		return err != nil && apiDenied(err), nil
	}))
	return s
}

// apiDenied: admission (the webhook or the CRD's validation), not the
// transport or a conflict, refused.
func apiDenied(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "denied the request") || strings.Contains(err.Error(), "is invalid"))
}

func (s *apiStore) key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: s.ns, Name: name}
}

func (s *apiStore) create(t *testing.T, name string, spec v1beta1.ApplicationUpgradeSpec) {
	// The random graphs point at Deployments that do not exist: admission
	// checks the graph and the rights, not existence.
	require.NoError(t, s.c.Create(s.ctx, &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name}, Spec: spec}))
}

func (s *apiStore) readAlpha(t *testing.T, name string) *v1alpha1.ApplicationUpgrade {
	a := &v1alpha1.ApplicationUpgrade{}
	require.NoError(t, s.c.Get(s.ctx, s.key(name), a))
	return a
}

func (s *apiStore) writeAlpha(t *testing.T, a *v1alpha1.ApplicationUpgrade) error {
	return onlyDenials(t, s.c.Update(s.ctx, a))
}

// onlyDenials returns err when admission refused the write and fails the
// test on any other error (a conflict or a transport error would otherwise
// pass for an expected refusal).
func onlyDenials(t *testing.T, err error) error {
	t.Helper()
	if err != nil && !apiDenied(err) {
		t.Fatalf("write failed for another reason than admission: %v", err)
	}
	return err
}

func (s *apiStore) patchAlphaImage(t *testing.T, name, role, image string) error {
	patch := fmt.Sprintf(`{"spec":{%q:{"image":%q}}}`, role, image)
	return onlyDenials(t, s.c.Patch(s.ctx, &v1alpha1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name}},
		client.RawPatch(types.MergePatchType, []byte(patch))))
}

func (s *apiStore) readBeta(t *testing.T, name string) *v1beta1.ApplicationUpgrade {
	u := &v1beta1.ApplicationUpgrade{}
	require.NoError(t, s.c.Get(s.ctx, s.key(name), u))
	return u
}

func (s *apiStore) writeBeta(t *testing.T, u *v1beta1.ApplicationUpgrade) error {
	return onlyDenials(t, s.c.Update(s.ctx, u))
}
