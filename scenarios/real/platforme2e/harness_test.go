//go:build e2e

package platforme2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/lunadas/upgrade-operator/deploy"
	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

const (
	secretNamespace = "upgrade-operator-system"
	secretName      = "keystone-credentials"
	webhookName     = "upgrade-operator-e2e"
	fakePassword    = "e2e-keystone-password"
	// pollInterval is the operator's strategy poll in these runs.
	pollInterval = 300 * time.Millisecond
)

// harness is one control plane, the webhook certificate and the operator.
type harness struct {
	t       *testing.T
	cfg     *rest.Config
	c       client.Client
	certDir string
	caPEM   []byte
	port    int

	fake    *fakevim.Server
	fakeURL string
	closeFV func()

	stopMgr func()
}

func newHarness(t *testing.T) *harness {
	// Info and above, no stack traces: the stopped managers' "context
	// canceled" errors would drown the output.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.ConsoleEncoder(), zap.Level(zapcore.InfoLevel), zap.StacktraceLevel(zapcore.PanicLevel)))
	cp, err := controlplane.Start(t.Context(), controlplane.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			cp.KeepLogs()
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	t.Logf("control plane ready in %s", cp.StartupDuration.Round(time.Millisecond))
	c, err := client.New(cp.RESTConfig, client.Options{Scheme: realcluster.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, cfg: cp.RESTConfig, c: c}
	if err := realcluster.InstallCRDs(t.Context(), c, deploy.CRDs, "crd/bases", time.Minute); err != nil {
		t.Fatal(err)
	}
	h.certDir, h.caPEM = selfSignedCert(t)
	h.port = freePort(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNamespace}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.stopOperator()
		if h.closeFV != nil {
			h.closeFV()
		}
	})
	return h
}

// selfSignedCert writes tls.crt / tls.key for 127.0.0.1 into a new
// directory; the certificate is its own CA (the caBundle).
func selfSignedCert(t *testing.T) (string, []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "upgrade-operator-webhook"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, certPEM
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// newSystem replaces the StarlingX system: a fresh demo model in mode
// behind a new fakevim (httptest, 127.0.0.1) at speed× the wall clock, and
// the credentials Secret pointing at it.
func (h *harness) newSystem(mode starlingx.SystemMode, speed float64) {
	if h.closeFV != nil {
		h.closeFV()
	}
	start := time.Now().UTC()
	model, err := starlingx.New(starlingx.DemoConfig(mode, start))
	if err != nil {
		h.t.Fatal(err)
	}
	srv, err := fakevim.New(fakevim.Options{Model: model, Clock: fakevim.NewSpeedClock(start, speed, nil).Now, Password: fakePassword})
	if err != nil {
		h.t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	srv.SetURLs(fakevim.ServiceURLs{Keystone: hs.URL, VIM: hs.URL, USM: hs.URL, Sysinv: hs.URL})
	h.fake, h.fakeURL, h.closeFV = srv, hs.URL, hs.Close
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: secretName}}
	data := map[string][]byte{vim.KeyAuthURL: []byte(hs.URL + "/v3"), vim.KeyUsername: []byte("admin"), vim.KeyPassword: []byte(fakePassword)}
	err = h.c.Get(h.t.Context(), client.ObjectKeyFromObject(s), s)
	switch {
	case apierrors.IsNotFound(err):
		s.Data = data
		err = h.c.Create(h.t.Context(), s)
	case err == nil:
		s.Data = data
		err = h.c.Update(h.t.Context(), s)
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

// startOperator runs the manager in-process (leader election on, the
// platform controller and webhook on) and waits until it leads and its
// webhook serves.
func (h *harness) startOperator() {
	run, err := manager.Start(context.Background(), h.cfg, manager.Options{
		MetricsAddr: "0", ProbeAddr: "0",
		LeaderElect: true, LeaderElectionNamespace: secretNamespace, LeaderElectionID: "upgrade-operator-e2e",
		// AppUpgrade: deploy/webhook/manifests.yaml (installed below) also holds the ApplicationUpgrade webhook.
		Webhook:            manager.WebhookOptions{Host: "127.0.0.1", Port: h.port, CertDir: h.certDir, AppUpgrade: true},
		SkipNameValidation: true,
		Platform: manager.PlatformOptions{
			Enabled: true, CredentialsSecret: types.NamespacedName{Namespace: secretNamespace, Name: secretName},
			PollInterval: pollInterval, IdlePollInterval: 2 * time.Second, RequestTimeout: 5 * time.Second,
		},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.stopMgr = func() {
		if err := run.Stop(context.Background()); err != nil {
			h.t.Errorf("manager: %v", err)
		}
	}
	elected, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := run.WaitElected(elected); err != nil {
		h.t.Fatalf("the manager was not elected within a minute: %v", err)
	}
	h.waitFor("the webhook to serve", 30*time.Second, func() (bool, error) {
		return run.GetWebhookServer().StartedChecker()(nil) == nil, nil
	})
}

func (h *harness) stopOperator() {
	if h.stopMgr != nil {
		h.stopMgr()
		h.stopMgr = nil
	}
}

// restartOperator stops the manager (it releases its Lease) and starts a
// new one: a cold start, nothing carried over but the cluster and the VIM.
func (h *harness) restartOperator() {
	h.stopOperator()
	h.startOperator()
}

// installWebhook installs deploy/webhook/manifests.yaml with its client
// config pointing at the in-process manager and the test's CA bundle.
func (h *harness) installWebhook() {
	root, err := controlplane.RepoRoot()
	if err != nil {
		h.t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "webhook", "manifests.yaml"))
	if err != nil {
		h.t.Fatal(err)
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.Unmarshal(raw, &vwc); err != nil {
		h.t.Fatal(err)
	}
	vwc.Name = webhookName
	for i := range vwc.Webhooks {
		w := &vwc.Webhooks[i]
		url := fmt.Sprintf("https://127.0.0.1:%d%s", h.port, *w.ClientConfig.Service.Path)
		w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: h.caPEM}
	}
	if err := h.c.Create(h.t.Context(), &vwc); err != nil {
		h.t.Fatal(err)
	}
	// The API server's webhook client may take a moment to see it.
	h.waitFor("the webhook to refuse an Upgrade other than system", 30*time.Second, func() (bool, error) {
		u := &v1alpha1.Upgrade{ObjectMeta: metav1.ObjectMeta{Name: "webhook-probe"},
			Spec: v1alpha1.UpgradeSpec{Release: v1alpha1.ReleaseSpec{Platform: "starlingx-99.99.0"}}}
		err := h.c.Create(h.t.Context(), u, client.DryRunAll)
		return err != nil && apierrors.IsForbidden(err), nil
	})
}

func (h *harness) uninstallWebhook() {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: webhookName}}
	if err := h.c.Delete(h.t.Context(), vwc); err != nil && !apierrors.IsNotFound(err) {
		h.t.Fatal(err)
	}
}

// fresh gives the next test a fresh system: the operator stopped, the
// webhook removed so that `system` can be deleted, a new fakevim system,
// the operator started (it bootstraps `system` from the new system) and the
// webhook installed again.
func (h *harness) fresh(mode starlingx.SystemMode, speed float64) {
	h.stopOperator()
	h.uninstallWebhook()
	u := &v1alpha1.Upgrade{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.SystemName}}
	// The API server may call the removed webhook (now down: failurePolicy
	// Fail) until it sees the configuration gone; retry the delete.
	h.waitFor("the old system Upgrade to be deleted", 30*time.Second, func() (bool, error) {
		err := h.c.Delete(h.t.Context(), u)
		return err == nil || apierrors.IsNotFound(err), nil
	})
	h.waitFor("the old system Upgrade to go", 30*time.Second, func() (bool, error) {
		err := h.c.Get(h.t.Context(), client.ObjectKeyFromObject(u), u)
		return apierrors.IsNotFound(err), nil
	})
	h.newSystem(mode, speed)
	h.startOperator()
	h.installWebhook()
	h.waitFor("the operator to bootstrap and observe system", 30*time.Second, func() (bool, error) {
		got, err := h.system()
		return err == nil && got.Status.Release != "" && got.Status.ObservedGeneration == got.Generation, nil
	})
}

func (h *harness) system() (*v1alpha1.Upgrade, error) {
	u := &v1alpha1.Upgrade{}
	err := h.c.Get(h.t.Context(), client.ObjectKey{Name: v1alpha1.SystemName}, u)
	return u, err
}

// mergePatch is `kubectl patch upgrade system --type merge -p body`.
func (h *harness) mergePatch(body string) error {
	u := &v1alpha1.Upgrade{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.SystemName}}
	return h.c.Patch(h.t.Context(), u, client.RawPatch(types.MergePatchType, []byte(body)))
}

// waitFor polls cond every 50ms until it holds or timeout passes.
func (h *harness) waitFor(what string, timeout time.Duration, cond func() (bool, error)) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(h.t.Context(), 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) { return cond() })
	if err != nil {
		u, _ := h.system()
		h.t.Fatalf("waiting %s for %s: %v\nsystem status: %+v\nfakevim: %v", timeout, what, err, u.Status.ActiveDeploy, h.fakeState())
	}
}

func (h *harness) fakeState() map[string]any {
	if h.fake == nil {
		return nil
	}
	return h.fake.State()
}

// strategyCreates counts the strategy creates fakevim received, per type.
func (h *harness) strategyCreates() map[string]int {
	out := map[string]int{}
	for _, r := range h.fake.Requests() {
		if kind, ok := strategyCreate(r); ok {
			out[kind]++
		}
	}
	return out
}

// observations counts the operator's observations of the system so far
// (each reconcile asks the VIM for its current strategy once).
func (h *harness) observations() int {
	return h.fake.CountRequests(http.MethodGet, "/api/orchestration/current-strategy/strategy")
}

// strategyCreate reports whether r is a successful strategy create and of
// which type ("sw-upgrade" or "kube-upgrade").
func strategyCreate(r fakevim.Request) (string, bool) {
	if r.Method != http.MethodPost || r.Status >= 300 {
		return "", false
	}
	switch r.Path {
	case "/api/orchestration/sw-upgrade/strategy":
		return "sw-upgrade", true
	case "/api/orchestration/kube-upgrade/strategy":
		return "kube-upgrade", true
	}
	return "", false
}
