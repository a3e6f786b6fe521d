// Command demo runs the demo upgrade on the local control plane (real
// kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kwok): it
// installs the CRDs and the demo app, runs the manager in-process, applies
// the sample ApplicationUpgrade, records the event log from watches, and
// exits 0 only when the upgrade is Completed with no API image write before
// the last old worker pod was deleted.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/lunadas/upgrade-operator/scenarios/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/realcluster"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	var (
		events  string
		timeout time.Duration
		keep    bool
		verbose bool
	)
	cmd := &cobra.Command{
		Use:           "demo",
		Short:         "Run the demo upgrade on the local control plane and check its ordering",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logs := io.Discard
			if verbose {
				logs = os.Stderr
			}
			errs := &realcluster.ErrorCounter{W: logs}
			ctrl.SetLogger(zap.New(zap.WriteTo(errs)))
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cp, err := controlplane.Start(ctx, controlplane.Options{KeepLogs: keep})
			if err != nil {
				return err
			}
			res, runErr := realcluster.RunDemo(ctx, realcluster.DemoConfig{
				RESTConfig: cp.RESTConfig, EventLogPath: events, Timeout: timeout, Out: os.Stdout,
				WatchNamespaces: []string{"job-system"},
			})
			if runErr != nil {
				cp.KeepLogs()
			}
			if err := cp.Stop(); err != nil && runErr == nil {
				runErr = err
			}
			if runErr != nil {
				return runErr
			}
			fmt.Printf("OK: demo upgrade completed in %s on the local control plane; no ordering violation; %d %q log entries\n",
				res.Elapsed.Round(time.Millisecond), errs.Count(), realcluster.ReconcilerErrorMarker)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&events, "events", "", "write the JSON Lines event log to this file")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "how long the upgrade may take")
	f.BoolVar(&keep, "keep-logs", false, "keep the control plane's work directory and logs")
	f.BoolVar(&verbose, "verbose", false, "print the manager's logs to stderr")
	return cmd
}
