// Command crds installs or removes the operator's CustomResourceDefinitions
// (generated into deploy/crd/bases, embedded here) in the cluster of the
// current kubeconfig, with controller-runtime's client: `make install` and
// `make uninstall`, no kubectl needed.
package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/deploy"
	appwebhook "github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "crds:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	var (
		kubeconfig    string
		timeout       time.Duration
		conversionURL string
		certDir       string
	)
	connect := func() (client.Client, error) {
		cfg, err := restConfig(kubeconfig)
		if err != nil {
			return nil, err
		}
		c, err := client.New(cfg, client.Options{Scheme: realcluster.Scheme()})
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
		}
		return c, nil
	}
	root := &cobra.Command{
		Use:           "crds",
		Short:         "Install or uninstall the upgrade-operator CRDs in the current kubeconfig's cluster",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&kubeconfig, "kubeconfig", "", "path to a kubeconfig; empty uses $KUBECONFIG, then ~/.kube/config")
	root.PersistentFlags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for the cluster")
	install := &cobra.Command{
		Use:   "install",
		Short: "Create or update the CRDs and wait until they are Established",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := signalContext(timeout)
			defer cancel()
			c, err := connect()
			if err != nil {
				return err
			}
			conv, err := localConversion(conversionURL, certDir)
			if err != nil {
				return err
			}
			if err := realcluster.InstallCRDsAsGenerated(ctx, c, deploy.CRDs, "crd/bases", timeout); err != nil {
				return fmt.Errorf("%w (is the cluster up and the kubeconfig right?)", err)
			}
			if conv != nil {
				if err := appwebhook.PointConversion(ctx, c, conv); err != nil {
					return err
				}
				// Admission (graph checks, overlap guard) goes to the same
				// server; Ignore while make run is not up (the controller's
				// hold and graph checks remain), unlike in-cluster's Fail.
				hook := appwebhook.URLValidatingWebhook(appwebhook.LocalWebhookName,
					strings.TrimSuffix(conversionURL, appwebhook.ConvertPath)+appwebhook.ValidatePath, conv.Webhook.ClientConfig.CABundle, admissionregistrationv1.Ignore)
				if err := appwebhook.PointValidation(ctx, c, hook); err != nil {
					return err
				}
			}
			fmt.Println("CRDs installed and Established: applicationupgrades.upgrades.lunadas.dev, upgrades.upgrade.starlingx.io")
			if conv != nil {
				fmt.Printf("ApplicationUpgrade conversion (v1alpha1 <-> v1beta1) and admission go to %s: start the operator there (make run)\n", strings.TrimSuffix(conversionURL, appwebhook.ConvertPath))
			}
			return nil
		},
	}
	install.Flags().StringVar(&conversionURL, "conversion-url", "https://127.0.0.1:9443/convert",
		"where the ApplicationUpgrade CRD sends conversion reviews: the webhook of make run (same port); empty leaves the CRD as generated (v1alpha1 objects then cannot be read until something sets spec.conversion)")
	install.Flags().StringVar(&certDir, "webhook-cert-dir", appwebhook.DefaultLocalCertDir(),
		"the self-signed certificate shared with make run (created when missing or expiring); its ca.crt becomes the CRD's caBundle")
	root.AddCommand(install)
	root.AddCommand(&cobra.Command{
		Use:   "uninstall",
		Short: "Delete the CRDs, and with them every ApplicationUpgrade and Upgrade",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := signalContext(timeout)
			defer cancel()
			c, err := connect()
			if err != nil {
				return err
			}
			hook := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			hook.Name = appwebhook.LocalWebhookName
			if err := c.Delete(ctx, hook); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("delete validatingwebhookconfiguration %s: %w", hook.Name, err)
			}
			deleted, err := realcluster.UninstallCRDs(ctx, c, deploy.CRDs, "crd/bases")
			if err != nil {
				return err
			}
			fmt.Printf("CRDs deleted: %v\n", deleted)
			return nil
		},
	})
	return root
}

func signalContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, func() { cancel(); stop() }
}

// restConfig loads --kubeconfig, else $KUBECONFIG / ~/.kube/config.
func restConfig(path string) (*rest.Config, error) {
	if path == "" {
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("load kubeconfig: %w (set KUBECONFIG or pass --kubeconfig)", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// localConversion is the CRD conversion for a conversion webhook at rawURL
// (https://host:port/convert) serving the certificate in certDir, or nil
// when rawURL is empty.
func localConversion(rawURL, certDir string) (*apiextensionsv1.CustomResourceConversion, error) {
	if rawURL == "" {
		return nil, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" {
		return nil, fmt.Errorf("--conversion-url %q: want https://HOST:PORT/convert", rawURL)
	}
	cert, err := appwebhook.LocalCert(certDir, u.Hostname())
	if err != nil {
		return nil, err
	}
	return appwebhook.URLConversion(rawURL, cert.CA), nil
}
