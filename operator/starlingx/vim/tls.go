package vim

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
)

// newTransport is the default transport with TLS per cfg: the system roots
// plus the CA bundle, TLS 1.2 at least.
func newTransport(cfg TLS) (*http.Transport, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.ServerName}
	if cfg.InsecureSkipVerify {
		tc.InsecureSkipVerify = true // explicit opt-in by the caller
	}
	if len(cfg.CABundle) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(cfg.CABundle) {
			return nil, fmt.Errorf("starlingx client config: the CA bundle holds no PEM certificate; give the system's CA certificate (ca.crt) in PEM form")
		}
		tc.RootCAs = pool
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = tc
	return t, nil
}
