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

	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
	"github.com/lunadas/upgrade-operator/scenarios/real/realnode"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	var (
		events   string
		timeout  time.Duration
		keep     bool
		verbose  bool
		realNode bool
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
			cp, err := controlplane.Start(ctx, controlplane.Options{KeepLogs: keep, RealNode: realNode})
			if err != nil {
				return err
			}
			cfg := realcluster.DemoConfig{
				RESTConfig: cp.RESTConfig, EventLogPath: events, Timeout: timeout, Out: os.Stdout,
				WatchNamespaces: []string{"job-system"},
			}
			where := "the local control plane"
			if realNode {
				cfg.PodTemplate = realnode.AdaptPodTemplate
				where += " (real containers on " + controlplane.RealNodeName + ")"
			}
			res, runErr := realcluster.RunDemo(ctx, cfg)
			if runErr != nil {
				cp.KeepLogs()
			}
			if err := cp.Stop(); err != nil && runErr == nil {
				runErr = err
			}
			if runErr != nil {
				return runErr
			}
			if realNode {
				rep, err := realnode.CheckExits(res.Events, "job-system", "job-worker", "job-api")
				if err != nil {
					return err
				}
				fmt.Printf("real node: last of %d old worker containers exited at %.3fs (containerd's exit time), API image written at %.3fs\n", rep.OldPods, rep.LastOldExit, rep.APIWrite)
			}
			fmt.Printf("OK: demo upgrade completed in %s on %s; no ordering violation; %d %q log entries\n",
				res.Elapsed.Round(time.Millisecond), where, errs.Count(), realcluster.ReconcilerErrorMarker)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&events, "events", "", "write the JSON Lines event log to this file")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "how long the upgrade may take")
	f.BoolVar(&keep, "keep-logs", false, "keep the control plane's work directory and logs")
	f.BoolVar(&verbose, "verbose", false, "print the manager's logs to stderr")
	f.BoolVar(&realNode, "real-node", false, "run the demo's pods as real containers on the real node (needs make node)")
	return cmd
}
