package realcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	appwebhook "github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
)

// The harness's webhook server: one per process, started by the first
// InstallCRDs and serving until the process exits. It is controller-runtime's
// conversion handler over the operator's scheme (v1alpha1 ⇄ the v1beta1
// hub), the same code the manager's webhook server runs at /convert, over
// TLS on 127.0.0.1 with a CA generated in memory. Its lifetime is the test
// process, not a manager's: a test that stops and restarts the operator
// keeps v1alpha1 readable throughout. Every API server the process starts
// (parallel tests each run their own) points at the same server:
// conversion is stateless.
var (
	convOnce sync.Once
	convSpec *apiextensionsv1.CustomResourceConversion
	convErr  error
	convMux  *http.ServeMux
	convBase string // https://127.0.0.1:PORT
	convCA   []byte
	hooks    atomic.Int64 // validating webhooks registered on convMux
)

// WebhookHost is the address the harness's webhook server listens on and
// the API server calls: 127.0.0.1 for the local control plane. A Kind
// node reaches the host at its Docker network's gateway instead; set this
// before the first InstallCRDs (the features' Kind run, -real.kind, does).
var WebhookHost = "127.0.0.1"

// LocalConversion starts the process's conversion server on first use and
// returns the spec.conversion that points a CRD at it. Only an API server
// on this machine (the local control plane) can reach 127.0.0.1; a Kind
// node cannot.
func LocalConversion() (*apiextensionsv1.CustomResourceConversion, error) {
	convOnce.Do(func() { convSpec, convErr = startConversionServer() })
	if convErr != nil {
		return nil, convErr
	}
	return convSpec.DeepCopy(), nil
}

func startConversionServer() (*apiextensionsv1.CustomResourceConversion, error) {
	cert, err := appwebhook.SelfSigned([]string{WebhookHost}, 24*time.Hour)
	if err != nil {
		return nil, fmt.Errorf("conversion server certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(cert.Cert, cert.Key)
	if err != nil {
		return nil, fmt.Errorf("conversion server certificate: %w", err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(WebhookHost, "0"))
	if err != nil {
		return nil, fmt.Errorf("conversion server: listen on %s: %w", WebhookHost, err)
	}
	mux := http.NewServeMux()
	convMux, convBase, convCA = mux, "https://"+l.Addr().String(), cert.CA
	mux.Handle(appwebhook.ConvertPath, conversion.NewWebhookHandler(Scheme(), conversion.NewRegistry()))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}
	go func() {
		// Serves until the process exits; ErrServerClosed never comes.
		if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(fmt.Sprintf("harness conversion server on %s stopped: %v", l.Addr(), err))
		}
	}()
	url := fmt.Sprintf("https://%s%s", l.Addr(), appwebhook.ConvertPath)
	return appwebhook.URLConversion(url, cert.CA), nil
}

// withConversion returns crd with its spec.conversion set to conv when crd
// is the ApplicationUpgrade CRD (the others have one version).
func withConversion(crd *apiextensionsv1.CustomResourceDefinition, conv *apiextensionsv1.CustomResourceConversion) *apiextensionsv1.CustomResourceDefinition {
	if conv == nil || crd.Name != appwebhook.CRDName {
		return crd
	}
	out := crd.DeepCopy()
	out.Spec.Conversion = conv.DeepCopy()
	return out
}

// HarnessWebhookName names the ValidatingWebhookConfiguration InstallCRDs
// creates on the local control plane.
const HarnessWebhookName = "upgrade-operator-harness"

// installValidatingWebhook registers the operator's ApplicationUpgrade
// admission (appwebhook.Validator: the graph checks and the overlap guard,
// listing upgrades through c) on the harness server at a path of its own,
// and points a ValidatingWebhookConfiguration of c's cluster at it — the
// configuration deploy/webhook installs in-cluster, with a URL instead of
// a Service. Like conversion, it outlives any manager the test restarts.
func installValidatingWebhook(ctx context.Context, c client.Client) error {
	if _, err := LocalConversion(); err != nil {
		return err
	}
	path := fmt.Sprintf("/validate-applicationupgrade/%d", hooks.Add(1))
	convMux.Handle(path, unreachableIn(admission.WithValidator[*upgradesv1beta1.ApplicationUpgrade](Scheme(), &appwebhook.Validator{Reader: c})))
	cfg := appwebhook.URLValidatingWebhook(HarnessWebhookName, convBase+path, convCA, admissionregistrationv1.Fail)
	return Apply(ctx, c, []client.Object{cfg})
}

// webhookDown holds, by namespace, until when the harness's validating
// webhook is unreachable for that namespace's requests (SetWebhookDown).
var webhookDown sync.Map // string → time.Time

// SetWebhookDown makes the harness's validating webhook unreachable, until
// until, for the admission requests of namespace (a zero until makes it
// reachable again): each such request is aborted before any answer
// (http.ErrAbortHandler: the connection, or the HTTP/2 stream, is reset),
// so the API server fails to call the webhook and applies its
// failurePolicy Fail — "failed calling webhook" — as when the webhook's
// pod is gone. One namespace only: every scenario running at once, and
// conversion, share the server.
func SetWebhookDown(namespace string, until time.Time) {
	if until.IsZero() {
		webhookDown.Delete(namespace)
		return
	}
	webhookDown.Store(namespace, until)
}

// unreachableIn aborts the admission requests of a namespace whose webhook
// is down (SetWebhookDown) and hands the others to next.
func unreachableIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, fmt.Sprintf("read the admission review: %v", err), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var review struct {
			Request *struct {
				Namespace string `json:"namespace"`
			} `json:"request"`
		}
		if json.Unmarshal(body, &review) == nil && review.Request != nil {
			if until, ok := webhookDown.Load(review.Request.Namespace); ok && time.Now().Before(until.(time.Time)) {
				panic(http.ErrAbortHandler)
			}
		}
		next.ServeHTTP(w, r)
	})
}
