package controlplane

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"slices"
	"testing"
)

func TestPKIClientCertsChainToCA(t *testing.T) {
	k, err := newPKI(t.TempDir(), net.ParseIP(serviceIP))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(k.caPEM) {
		t.Fatal("CA PEM not parseable")
	}
	for user, kp := range k.clients {
		pair, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
		if err != nil {
			t.Fatalf("%s: key pair: %v", user, err)
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s: client certificate does not verify: %v", user, err)
		}
		if leaf.Subject.CommonName != user || !slices.Equal(leaf.Subject.Organization, []string{mastersGroup}) {
			t.Errorf("%s: subject %v, want CN=%s O=%s", user, leaf.Subject, user, mastersGroup)
		}
	}
}

func TestPKIServingCertCoversLoopbackAndServiceIP(t *testing.T) {
	dir := t.TempDir()
	k, err := newPKI(dir, net.ParseIP(serviceIP))
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(k.servingCert, k.servingKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(k.caPEM)
	for _, host := range []string{"127.0.0.1", serviceIP, "localhost", "kubernetes.default.svc"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("serving certificate not valid for %s: %v", host, err)
		}
	}
}
