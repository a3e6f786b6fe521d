package webhook

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
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// CRDName is the ApplicationUpgrade CRD, the one with two versions to convert between.
const CRDName = "applicationupgrades.upgrades.lunadas.dev"

// ConvertPath is where the manager's webhook server (and the test harness's
// conversion server) serve conversion reviews.
const ConvertPath = "/convert"

// Cert is a serving certificate and the self-signed CA that signed it, PEM-encoded.
type Cert struct {
	CA, Cert, Key []byte
}

// SelfSigned generates a fresh CA (ECDSA P-256) and a serving certificate
// it signs for hosts (IP addresses or DNS names), valid for validity from
// now (minus a minute of clock skew). The CA is what a CRD's or webhook
// configuration's caBundle must hold. Errors only on a crypto failure.
func SelfSigned(hosts []string, validity time.Duration) (Cert, error) {
	now := time.Now().Add(-time.Minute)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Cert{}, fmt.Errorf("generate ca key: %w", err)
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "upgrade-operator-webhook-ca"},
		NotBefore: now, NotAfter: now.Add(validity), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return Cert{}, fmt.Errorf("sign ca: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Cert{}, fmt.Errorf("generate serving key: %w", err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "upgrade-operator-webhook"},
		NotBefore: now, NotAfter: now.Add(validity),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return Cert{}, fmt.Errorf("parse ca: %w", err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return Cert{}, fmt.Errorf("sign serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return Cert{}, fmt.Errorf("encode serving key: %w", err)
	}
	return Cert{
		CA:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// WriteFiles writes tls.crt, tls.key and ca.crt into dir (created 0700),
// the layout controller-runtime's webhook server reads from its CertDir.
func (c Cert) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create webhook cert dir %s: %w", dir, err)
	}
	for name, data := range map[string][]byte{"tls.crt": c.Cert, "tls.key": c.Key, "ca.crt": c.CA} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("write webhook certificate %s: %w", filepath.Join(dir, name), err)
		}
	}
	return nil
}

// URLConversion is the spec.conversion of a CRD whose conversion webhook
// is served at url (https://host:port/convert) with a certificate signed by
// caPEM; conversion reviews v1.
func URLConversion(url string, caPEM []byte) *apiextensionsv1.CustomResourceConversion {
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			ConversionReviewVersions: []string{"v1"},
		},
	}
}

// PointConversion sets the spec.conversion of the stored ApplicationUpgrade
// CRD (CRDName) to conv, retrying on conflicts. c's scheme must hold
// apiextensions/v1, and its identity may update
// customresourcedefinitions: only local runs (make run --webhook-self-signed)
// and test harnesses use it, never the in-cluster operator. Errors name the
// CRD and say what to check.
func PointConversion(ctx context.Context, c client.Client, conv *apiextensionsv1.CustomResourceConversion) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := c.Get(ctx, client.ObjectKey{Name: CRDName}, &crd); err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(crd.Spec.Conversion, conv) {
			return nil // unchanged: an update would close every open watch on the CRD's objects
		}
		crd.Spec.Conversion = conv.DeepCopy()
		return c.Update(ctx, &crd)
	})
	if err != nil {
		return fmt.Errorf("point crd %s's conversion webhook at this process: %w (is the CRD installed, e.g. make install, and may this identity update CRDs?)", CRDName, err)
	}
	return nil
}

// DefaultLocalCertDir is where a manager run outside the cluster (make run)
// and `make install` share the conversion webhook's self-signed
// certificate: <user cache dir>/upgrade-operator/webhook.
func DefaultLocalCertDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "upgrade-operator", "webhook")
}

// LocalCert returns the certificate in dir (ca.crt, tls.crt, tls.key) when
// it serves host, chains to ca.crt and is valid for at least another day;
// otherwise it generates one (SelfSigned, 30 days) and writes it there.
// Reusing it keeps the CRD's caBundle unchanged between `make install` and
// `make run`, and across restarts, so open watches on the CRD's objects are
// not closed by a CRD update. Errors name the directory.
func LocalCert(dir, host string) (Cert, error) {
	if c, ok := readLocalCert(dir, host); ok {
		return c, nil
	}
	c, err := SelfSigned([]string{host}, 30*24*time.Hour)
	if err != nil {
		return Cert{}, err
	}
	return c, c.WriteFiles(dir)
}

func readLocalCert(dir, host string) (Cert, bool) {
	var c Cert
	for name, dst := range map[string]*[]byte{"ca.crt": &c.CA, "tls.crt": &c.Cert, "tls.key": &c.Key} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return Cert{}, false
		}
		*dst = b
	}
	block, _ := pem.Decode(c.Cert)
	if block == nil {
		return Cert{}, false
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil || time.Until(leaf.NotAfter) < 24*time.Hour {
		return Cert{}, false
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(c.CA) {
		return Cert{}, false
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
		return Cert{}, false
	}
	return c, true
}

// ValidatePath is where the manager's webhook server serves the
// ApplicationUpgrade admission webhook (the +kubebuilder:webhook marker's path).
const ValidatePath = "/validate-upgrades-lunadas-dev-v1beta1-applicationupgrade"

// LocalWebhookName names the ValidatingWebhookConfiguration that points the
// API server at a manager outside the cluster (make install / make run).
const LocalWebhookName = "upgrade-operator-local"

// URLValidatingWebhook is a ValidatingWebhookConfiguration named name that
// sends ApplicationUpgrade creates and updates (v1beta1; v1alpha1 requests
// converted, matchPolicy Equivalent) to url, trusting caPEM — what
// deploy/webhook installs in-cluster, with a URL instead of a Service.
// failurePolicy decides what happens while nothing listens at url.
func URLValidatingWebhook(name, url string, caPEM []byte, failurePolicy admissionregistrationv1.FailurePolicyType) *admissionregistrationv1.ValidatingWebhookConfiguration {
	none, equivalent := admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.Equivalent
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "vapplicationupgrade.upgrades.lunadas.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{v1beta1.GroupVersion.Group},
					APIVersions: []string{v1beta1.GroupVersion.Version}, Resources: []string{"applicationupgrades"}},
			}},
			FailurePolicy:           &failurePolicy,
			SideEffects:             &none,
			MatchPolicy:             &equivalent,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// PointValidation creates cfg, or updates the existing configuration of
// that name when its webhooks differ. c's scheme must hold
// admissionregistration/v1 and its identity may write
// validatingwebhookconfigurations (your kubeconfig for make install / make
// run; never the in-cluster operator). Errors name the configuration.
func PointValidation(ctx context.Context, c client.Client, cfg *admissionregistrationv1.ValidatingWebhookConfiguration) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cur admissionregistrationv1.ValidatingWebhookConfiguration
		err := c.Get(ctx, client.ObjectKey{Name: cfg.Name}, &cur)
		if apierrors.IsNotFound(err) {
			return c.Create(ctx, cfg.DeepCopy())
		}
		if err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(cur.Webhooks, cfg.Webhooks) {
			return nil
		}
		cur.Webhooks = cfg.DeepCopy().Webhooks
		return c.Update(ctx, &cur)
	})
	if err != nil {
		return fmt.Errorf("register validatingwebhookconfiguration %s: %w (may this identity write validatingwebhookconfigurations?)", cfg.Name, err)
	}
	return nil
}
