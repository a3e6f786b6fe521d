package realcluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	appwebhook "github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
)

// The harness's conversion server: one per process, started by the first
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
)

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
	cert, err := appwebhook.SelfSigned([]string{"127.0.0.1"}, 24*time.Hour)
	if err != nil {
		return nil, fmt.Errorf("conversion server certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(cert.Cert, cert.Key)
	if err != nil {
		return nil, fmt.Errorf("conversion server certificate: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("conversion server: listen on 127.0.0.1: %w", err)
	}
	mux := http.NewServeMux()
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
