// Command benchoperator is the operator's manager (operator/manager.New,
// exactly as cmd/upgrade-operator builds it) with instruments for make
// bench: a counting http.RoundTripper wrapped into its rest.Config and an
// HTTP endpoint, GET /snapshot, serving opstats.Snapshot (requests by verb
// and resource, reconciles, heap after GC, RSS). It writes the endpoint's
// address to --addr-file once listening.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/bench/opstats"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchoperator:", err)
		os.Exit(1)
	}
}

func run() error {
	// A FlagSet of its own: controller-runtime registers --kubeconfig on flag.CommandLine.
	fs := flag.NewFlagSet("benchoperator", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "path to the kubeconfig")
	namespaces := fs.String("watch-namespaces", "", "as upgrade-operator's --watch-namespaces; empty watches all")
	listen := fs.String("listen", "127.0.0.1:0", "address of the /snapshot endpoint")
	addrFile := fs.String("addr-file", "", "file receiving the endpoint's host:port once listening")
	qps := fs.Float64("qps", -1, "client-side QPS limit; -1 disables it, as ctrl.GetConfig does for the in-cluster config")
	workers := fs.Int("max-concurrent-reconciles", 0, "as upgrade-operator's --max-concurrent-reconciles")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	_ = fs.Parse(os.Args[1:])
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig %s: %w", *kubeconfig, err)
	}
	cfg.QPS = float32(*qps)
	counter := opstats.NewCounter()
	cfg.Wrap(counter.Wrap)
	src := opstats.NewSource(counter, "applicationupgrade")

	ctx := ctrl.SetupSignalHandler()
	run, err := manager.Start(ctx, cfg, manager.Options{WatchNamespaces: manager.ParseNamespaces(*namespaces), MetricsAddr: "0", ProbeAddr: "0", MaxConcurrentReconciles: *workers})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	go func() { _ = http.Serve(ln, src) }()
	if *addrFile != "" {
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Clean(*addrFile)); err != nil {
			return err
		}
	}
	go func() {
		if run.WaitForCacheSync(ctx) == nil {
			src.MarkSynced()
		}
	}()
	return run.Wait()
}
