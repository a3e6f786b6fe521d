package manager

import (
	"context"
	"fmt"
	"net"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appwebhook "github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
)

// selfSign completes o for a manager outside the cluster (o.SelfSigned):
// Host defaults to 127.0.0.1 and Port to 9443; the certificate for Host in
// CertDir (appwebhook.DefaultLocalCertDir when empty) is reused or created
// (appwebhook.LocalCert), and the ApplicationUpgrade CRD's conversion is
// pointed at https://Host:Port/convert unless it already is (`make install`
// points it there first, so nothing watching the CRD's objects is cut off),
// and the ValidatingWebhookConfiguration appwebhook.LocalWebhookName at
// this process's admission webhook (failurePolicy Ignore: while the process
// is down, creates pass and the controller's hold and graph checks remain).
func selfSign(ctx context.Context, cfg *rest.Config, o *WebhookOptions) error {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Port == 0 {
		o.Port = 9443
	}
	if o.CertDir == "" {
		o.CertDir = appwebhook.DefaultLocalCertDir()
	}
	cert, err := appwebhook.LocalCert(o.CertDir, o.Host)
	if err != nil {
		return fmt.Errorf("self-signed webhook certificate: %w", err)
	}
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return fmt.Errorf("apiextensions scheme: %w", err)
	}
	if err := admissionregistrationv1.AddToScheme(s); err != nil {
		return fmt.Errorf("admissionregistration scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("client for the crd conversion: %w", err)
	}
	base := "https://" + net.JoinHostPort(o.Host, strconv.Itoa(o.Port))
	if err := appwebhook.PointConversion(ctx, c, appwebhook.URLConversion(base+appwebhook.ConvertPath, cert.CA)); err != nil {
		return err
	}
	// Admission too (unchanged when make install registered it already);
	// Ignore while this process is down, as make install registers it.
	return appwebhook.PointValidation(ctx, c, appwebhook.URLValidatingWebhook(appwebhook.LocalWebhookName,
		base+appwebhook.ValidatePath, cert.CA, admissionregistrationv1.Ignore))
}
