// Command upgrade-operator runs the operator's manager against the cluster
// of --kubeconfig (or the in-cluster config).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/lunadas/upgrade-operator/operator/manager"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "upgrade-operator:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	var (
		opts       manager.Options
		namespaces string
		kubeconfig string
		secret     string
		certSecret string
		zapOpts    = zap.Options{}
	)
	cmd := &cobra.Command{
		Use:           "upgrade-operator",
		Short:         "Upgrade a worker Deployment before its API, writing the API image only once every old worker pod is gone",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
			cfg, err := restConfig(kubeconfig)
			if err != nil {
				return err
			}
			opts.WatchNamespaces = manager.ParseNamespaces(namespaces)
			if err := platformFlags(cmd, &opts, secret); err != nil {
				return err
			}
			if err := certFlags(&opts, certSecret); err != nil {
				return err
			}
			ctx := ctrl.SetupSignalHandler()
			mgr, err := manager.New(ctx, cfg, opts)
			if err != nil {
				return err
			}
			ctrl.Log.Info("starting manager", "watchNamespaces", opts.WatchNamespaces, "leaderElection", opts.LeaderElect)
			return mgr.Start(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&namespaces, "watch-namespaces", "", "comma-separated namespaces to watch (Deployments, pods, ApplicationUpgrades); empty watches all")
	f.StringVar(&kubeconfig, "kubeconfig", "", "path to a kubeconfig; empty uses $KUBECONFIG, then the in-cluster config")
	f.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080", "metrics listen address; 0 disables")
	f.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081", "health probe listen address; 0 disables")
	f.BoolVar(&opts.LeaderElect, "leader-elect", false, "enable leader election so only one replica reconciles")
	f.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader election Lease; empty uses the pod's namespace")
	f.StringVar(&opts.LeaderElectionID, "leader-election-id", manager.DefaultLeaderElectionID, "name of the leader election Lease")
	f.IntVar(&opts.MaxConcurrentReconciles, "max-concurrent-reconciles", manager.DefaultMaxConcurrentReconciles, "upgrades reconciled at once (one upgrade is never reconciled twice at once); with 1, 20 upgrades at once among 1,000 busy Deployments waited seconds in the queue (single runs on a shared machine: docs/performance.md)")
	f.BoolVar(&opts.AllowCrossNamespaceRefs, "allow-cross-namespace-refs", false, "let an ApplicationUpgrade name Deployments in other namespaces than its own (its author must still be allowed to get and patch them); off, such upgrades are refused at admission and failed by the controller")
	f.StringVar(&opts.DefaultServiceAccount, "default-service-account", "", "ServiceAccount (of each upgrade's namespace) to impersonate for the Deployment reads and writes of upgrades without spec.serviceAccountName; empty uses the operator's own identity (multi-tenant lockdown: docs/multi-tenancy.md)")
	addPlatformFlags(cmd, &opts, &secret)
	addServingFlags(cmd, &opts, &certSecret)
	f.BoolVar(&opts.Webhook.AppUpgrade, "appupgrade-webhooks", true, "serve the ApplicationUpgrade conversion (/convert) and validating webhooks on the webhook server (needs its certificate); false only where another server converts, as in the test harnesses")
	f.BoolVar(&opts.Webhook.SelfSigned, "webhook-self-signed", false, "outside the cluster (make run): serve the webhooks on --webhook-host (default 127.0.0.1) with the self-signed certificate shared with make install (created when missing) and point the ApplicationUpgrade CRD's conversion at them unless it already is (needs update on that CRD)")
	gfs := flag.NewFlagSet("zap", flag.ContinueOnError)
	zapOpts.BindFlags(gfs)
	f.AddGoFlagSet(gfs)
	return cmd
}

// restConfig loads --kubeconfig, else $KUBECONFIG / ~/.kube/config, else the in-cluster config.
func restConfig(path string) (*rest.Config, error) {
	if path == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	// No client-side rate limit, as ctrl.GetConfig sets for $KUBECONFIG and
	// the in-cluster config (API priority and fairness applies). Left at 0,
	// client-go throttles to 5 requests/s (burst 10): make bench measured
	// handoffs of 6–9 s with 25 upgrades in flight (docs/performance.md).
	if cfg.QPS == 0 {
		cfg.QPS = -1
	}
	return cfg, nil
}
