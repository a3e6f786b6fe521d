package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/operator/platform/controller"
	"github.com/lunadas/upgrade-operator/operator/platform/deploy"
)

// addPlatformFlags binds the platform Upgrade controller's and the webhook
// server's flags.
func addPlatformFlags(cmd *cobra.Command, opts *manager.Options, secret *string) {
	f := cmd.Flags()
	p := &opts.Platform
	f.BoolVar(&p.Enabled, "platform", false, "enable the platform Upgrade controller (StarlingX sw-deploy / kube-upgrade through the VIM) and its webhook; turns leader election on unless --leader-elect is given")
	f.StringVar(secret, "starlingx-credentials-secret", "", "<namespace>/<name> of the Secret with the Keystone credentials (OS_AUTH_URL, OS_USERNAME, OS_PASSWORD, ... as in openrc), read through the API (needs get on that Secret)")
	f.StringVar(&p.CredentialsDir, "starlingx-credentials-dir", os.Getenv("UPGRADE_OPERATOR_KEYSTONE_CREDENTIALS_DIR"), "directory of a mounted Secret with the Keystone credentials, one file per openrc variable (default $UPGRADE_OPERATOR_KEYSTONE_CREDENTIALS_DIR); takes precedence over --starlingx-credentials-secret")
	f.StringVar(&p.Endpoints.VIM, "vim-url", os.Getenv("UPGRADE_OPERATOR_VIM_URL"), "VIM (nfv-vim) base URL, e.g. https://controller:4545 (default $UPGRADE_OPERATOR_VIM_URL); empty: from the Keystone catalog")
	f.StringVar(&p.Endpoints.USM, "usm-url", "", "USM (software) base URL, e.g. https://controller:5493; empty: from the Keystone catalog")
	f.StringVar(&p.Endpoints.Sysinv, "sysinv-url", "", "sysinv base URL, e.g. https://controller:6385; empty: from the Keystone catalog")
	f.StringVar(&p.CABundleFile, "starlingx-ca-bundle", "", "PEM file of CAs to trust for Keystone, the VIM, USM and sysinv (added to the system roots)")
	f.BoolVar(&p.InsecureSkipVerify, "starlingx-insecure-skip-verify", false, "do not verify the StarlingX APIs' TLS certificates (testing only)")
	f.DurationVar(&p.PollInterval, "platform-poll-interval", controller.DefaultPollInterval, "how often a running VIM strategy is polled")
	f.DurationVar(&p.IdlePollInterval, "platform-idle-poll-interval", controller.DefaultIdlePollInterval, "how often an idle system is observed again")
	f.IntVar(&p.MaxBuildRetries, "platform-max-build-retries", deploy.DefaultMaxBuildRetries, "automatic re-creations of a strategy whose build failed, per step")
	f.StringVar(&opts.Webhook.Host, "webhook-host", "", "admission webhook listen host; empty: all interfaces")
	f.IntVar(&opts.Webhook.Port, "webhook-port", 9443, "admission webhook listen port")
	f.StringVar(&opts.Webhook.CertDir, "webhook-cert-dir", "", "directory with the webhook's tls.crt and tls.key; empty: controller-runtime's default")
}

// platformFlags checks and completes the platform options once parsed.
func platformFlags(cmd *cobra.Command, opts *manager.Options, secret string) error {
	if !opts.Platform.Enabled {
		return nil
	}
	if !cmd.Flags().Changed("leader-elect") {
		opts.LeaderElect = true
	}
	if opts.Platform.CredentialsDir != "" && secret == "" {
		return nil
	}
	ns, name, ok := strings.Cut(secret, "/")
	if !ok || ns == "" || name == "" {
		return fmt.Errorf("--platform needs --starlingx-credentials-dir DIR or --starlingx-credentials-secret <namespace>/<name> (got %q)", secret)
	}
	opts.Platform.CredentialsSecret = types.NamespacedName{Namespace: ns, Name: name}
	return nil
}
