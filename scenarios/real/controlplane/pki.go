package controlplane

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// User names the components authenticate as (client certificate CN). Every
// component is in system:masters, so no RBAC bootstrap is needed for them.
const (
	adminUser             = "admin"
	controllerManagerUser = "system:kube-controller-manager"
	schedulerUser         = "system:kube-scheduler"
	kwokUser              = "kwok"
	mastersGroup          = "system:masters"
)

// pki holds the paths and PEM data of every key and certificate the control
// plane uses, all generated in Go into one directory.
type pki struct {
	caPEM                     []byte
	ca                        *keyPair // signs the real node's kubelet certificate
	caFile                    string
	servingCert, servingKey   string
	saPrivateKey, saPublicKey string
	clients                   map[string]*keyPair
}

// newPKI generates a CA, the API server's serving certificate (valid for
// 127.0.0.1, serviceIP and the in-cluster names), the service-account
// signing key and one client certificate per component, and writes them
// under dir.
func newPKI(dir string, serviceIP net.IP) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create pki directory: %w", err)
	}
	ca, err := newCA("upgrade-operator-controlplane-ca")
	if err != nil {
		return nil, err
	}
	p := &pki{caPEM: ca.CertPEM, ca: ca, clients: map[string]*keyPair{}}
	if p.caFile, _, err = writeKeyPair(dir, "ca", ca); err != nil {
		return nil, err
	}
	serving, err := newServingCert(ca, "kube-apiserver",
		[]net.IP{net.ParseIP("127.0.0.1"), serviceIP},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"})
	if err != nil {
		return nil, err
	}
	if p.servingCert, p.servingKey, err = writeKeyPair(dir, "apiserver", serving); err != nil {
		return nil, err
	}
	for _, user := range []string{adminUser, controllerManagerUser, schedulerUser, kwokUser} {
		kp, err := newClientCert(ca, user, mastersGroup)
		if err != nil {
			return nil, err
		}
		p.clients[user] = kp
	}
	priv, pub, err := serviceAccountKey()
	if err != nil {
		return nil, err
	}
	p.saPrivateKey = filepath.Join(dir, "sa.key")
	p.saPublicKey = filepath.Join(dir, "sa.pub")
	if err := os.WriteFile(p.saPrivateKey, priv, 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", p.saPrivateKey, err)
	}
	if err := os.WriteFile(p.saPublicKey, pub, 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w", p.saPublicKey, err)
	}
	return p, nil
}
