// Command controlplane runs a local Kubernetes control plane (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler and kwok, from
// bin/ as built by `make controlplane`) until SIGINT or SIGTERM, and writes
// an admin kubeconfig for it. `make controlplane-up` runs it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type flags struct {
	kubeconfigOut string
	binDir        string
	stagesDir     string
	keepLogs      bool
	realNode      bool
}

func newCommand() *cobra.Command {
	var f flags
	cmd := &cobra.Command{
		Use:   "controlplane",
		Short: "Run a local Kubernetes control plane with kwok nodes until interrupted",
		Long: `Starts etcd, kube-apiserver, kube-controller-manager (deployment, replicaset,
serviceaccount, namespace and garbage-collector controllers), kube-scheduler
and kwok on free 127.0.0.1 ports, creates one kwok Node, writes an admin
kubeconfig to --kubeconfig-out and runs until SIGINT/SIGTERM. Pod timings
come from pod annotations: see deploy/kwok/README.md.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return run(cmd.Context(), f)
		},
	}
	cmd.Flags().StringVar(&f.kubeconfigOut, "kubeconfig-out", filepath.Join(".controlplane", "kubeconfig"), "where to write the admin kubeconfig")
	cmd.Flags().StringVar(&f.binDir, "bin-dir", "", "directory with the control-plane binaries (default <repo root>/bin)")
	cmd.Flags().StringVar(&f.stagesDir, "stages-dir", "", "directory with the kwok Stage files (default <repo root>/deploy/kwok/stages)")
	cmd.Flags().BoolVar(&f.keepLogs, "keep-logs", false, "keep the work directory with the component logs after stopping")
	cmd.Flags().BoolVar(&f.realNode, "real-node", false, "also run a real node (containerd + kubelet, Node "+controlplane.RealNodeName+"; needs 'make node')")
	return cmd
}

func run(ctx context.Context, f flags) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cp, err := controlplane.Start(ctx, controlplane.Options{BinDir: f.binDir, StagesDir: f.stagesDir, KeepLogs: f.keepLogs, RealNode: f.realNode})
	if err != nil {
		return err
	}
	if err := writeKubeconfig(cp.Kubeconfig, f.kubeconfigOut); err != nil {
		return stopAfter(cp, err)
	}
	out, err := filepath.Abs(f.kubeconfigOut)
	if err != nil {
		out = f.kubeconfigOut
	}
	fmt.Printf("control plane ready in %s (logs in %s); use it with:\n  export KUBECONFIG=%s\n", cp.StartupDuration.Round(1e6), cp.LogDir, out)
	select {
	case <-ctx.Done():
		fmt.Println("stopping control plane")
	case <-cp.Done():
		cp.KeepLogs()
		err = fmt.Errorf("controlplane: a component stopped on its own: %w", cp.Err())
	}
	return stopAfter(cp, err)
}

// stopAfter stops cp and returns cause joined with any stop error.
func stopAfter(cp *controlplane.ControlPlane, cause error) error {
	return errors.Join(cause, cp.Stop())
}

// writeKubeconfig copies the control plane's kubeconfig to dst, creating
// dst's directory.
func writeKubeconfig(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("read kubeconfig %s: %w", src, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("create directory for --kubeconfig-out %s: %w", dst, err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		return fmt.Errorf("write --kubeconfig-out %s: %w", dst, err)
	}
	return nil
}
