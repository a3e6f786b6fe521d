//go:build bench

package realbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/deploy"
	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

// env is one running control plane and what the phases need of it.
type env struct {
	cp          *controlplane.ControlPlane
	cfg         *rest.Config
	client      client.Client
	kubeconfig  string
	operatorBin string
	dir         string
	logf        func(format string, args ...any)
}

// RunOptions are the driver's inputs beyond Config.
type RunOptions struct {
	// OperatorBin is the built scenarios/bench/cmd/benchoperator.
	OperatorBin string
	// WorkDir receives the operator logs; a temporary directory when empty.
	WorkDir string
	// Logf prints progress.
	Logf func(format string, args ...any)
}

// Run runs the selected phases, each on a control plane of its own (the
// scale phase starts from an empty cluster), and samples the machine's
// load throughout.
func Run(ctx context.Context, cfg Config, o RunOptions) (*Result, error) {
	cfg = cfg.WithDefaults()
	if o.Logf == nil {
		o.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	}
	if o.WorkDir == "" {
		dir, err := os.MkdirTemp("", "bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		o.WorkDir = dir
	}
	res := &Result{Started: time.Now().UTC(), Config: cfg}
	sampler := startSampler(2 * time.Second)
	defer func() { res.Machine = sampler.stop() }()
	var errs []error
	if slices.Contains(cfg.Phases, "latency") {
		err := withEnv(ctx, o, func(e *env) error {
			var err error
			res.Latency, err = runLatency(ctx, e, cfg)
			return err
		})
		errs = append(errs, err)
	}
	if slices.Contains(cfg.Phases, "scale") {
		err := withEnv(ctx, o, func(e *env) error {
			var err error
			res.Scale, err = runScale(ctx, e, cfg)
			return err
		})
		errs = append(errs, err)
	}
	if slices.Contains(cfg.Phases, "load") {
		err := withEnv(ctx, o, func(e *env) error {
			var err error
			res.Load, err = runLoad(ctx, e, cfg)
			return err
		})
		errs = append(errs, err)
	}
	res.Machine = sampler.stop()
	return res, errors.Join(errs...)
}

// withEnv starts a control plane (the controller-manager's client rate
// limit raised so thousands of Deployments settle in seconds rather than
// minutes: its default is 20 requests/s), installs the CRDs, runs f and
// stops everything.
func withEnv(ctx context.Context, o RunOptions, f func(*env) error) (err error) {
	o.Logf("starting a control plane")
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Logf: o.Logf,
		ExtraArgs: map[string][]string{
			"kube-controller-manager": {"--kube-api-qps=1000", "--kube-api-burst=2000"},
		},
	})
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			cp.KeepLogs()
		}
		err = errors.Join(err, cp.Stop())
	}()
	cfg := rest.CopyConfig(cp.RESTConfig)
	cfg.QPS, cfg.Burst = -1, 0 // the driver and its pollers are not throttled client-side
	c, err := client.New(cfg, client.Options{Scheme: realcluster.Scheme()})
	if err != nil {
		return err
	}
	if err := realcluster.InstallCRDs(ctx, c, deploy.CRDs, "crd/bases", time.Minute); err != nil {
		return err
	}
	e := &env{cp: cp, cfg: cfg, client: c, kubeconfig: cp.Kubeconfig, operatorBin: o.OperatorBin, dir: o.WorkDir, logf: o.Logf}
	errc := make(chan error, 1)
	go func() { errc <- f(e) }()
	select {
	case err = <-errc:
		return err
	case <-cp.Done():
		return fmt.Errorf("control plane: %w", cp.Err())
	}
}
