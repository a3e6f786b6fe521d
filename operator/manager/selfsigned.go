package manager

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appwebhook "github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
)

// selfSign completes o for a manager outside the cluster (o.SelfSigned):
// Host defaults to 127.0.0.1 and Port to 9443, a fresh certificate for Host
// goes into CertDir (a new temporary directory when empty), and the
// ApplicationUpgrade CRD's conversion is pointed at https://Host:Port/convert.
func selfSign(ctx context.Context, cfg *rest.Config, o *WebhookOptions) error {
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.Port == 0 {
		o.Port = 9443
	}
	if o.CertDir == "" {
		dir, err := os.MkdirTemp("", "upgrade-operator-webhook-")
		if err != nil {
			return fmt.Errorf("webhook cert dir: %w", err)
		}
		o.CertDir = dir
	}
	cert, err := appwebhook.SelfSigned([]string{o.Host}, 30*24*time.Hour)
	if err != nil {
		return fmt.Errorf("self-signed webhook certificate: %w", err)
	}
	if err := cert.WriteFiles(o.CertDir); err != nil {
		return err
	}
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return fmt.Errorf("apiextensions scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("client for the crd conversion: %w", err)
	}
	url := "https://" + net.JoinHostPort(o.Host, strconv.Itoa(o.Port)) + appwebhook.ConvertPath
	return appwebhook.PointConversion(ctx, c, appwebhook.URLConversion(url, cert.CA))
}
