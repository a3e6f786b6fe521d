//go:build bench

package realbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/lunadas/upgrade-operator/scenarios/bench/opstats"
	"github.com/lunadas/upgrade-operator/scenarios/real/operatorproc"
)

// operatorProc is one run of the benchoperator binary (an
// operatorproc.Process) and the address of its /snapshot endpoint.
type operatorProc struct {
	*operatorproc.Process
	addr string
}

// stopGrace is how long a stopped benchoperator may take to exit before
// it is killed.
const stopGrace = 10 * time.Second

// startOperator runs bin against kubeconfig watching namespaces (nil: all)
// and waits until its /snapshot endpoint answers.
func startOperator(ctx context.Context, bin, kubeconfig, dir, name string, namespaces []string) (*operatorProc, error) {
	addrFile := filepath.Join(dir, name+".addr")
	args := []string{"--kubeconfig=" + kubeconfig, "--watch-namespaces=" + strings.Join(namespaces, ","), "--addr-file=" + addrFile}
	// BENCH_OPERATOR_ARGS adds flags, e.g. "--zap-log-level=5" to log every reconcile.
	args = append(args, strings.Fields(os.Getenv("BENCH_OPERATOR_ARGS"))...)
	proc, err := operatorproc.Start(bin, args, filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	p := &operatorProc{Process: proc}
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		if err := p.Exited(); err != nil {
			return false, err
		}
		b, err := os.ReadFile(addrFile)
		if err != nil {
			return false, nil
		}
		p.addr = string(b)
		return true, nil
	})
	if err != nil {
		return nil, errors.Join(err, p.stop())
	}
	return p, nil
}

// waitSynced polls the snapshot until the caches have synced and returns it.
func (p *operatorProc) waitSynced(ctx context.Context, timeout time.Duration) (opstats.Snapshot, error) {
	var snap opstats.Snapshot
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := p.Exited(); err != nil {
			return false, err
		}
		s, err := opstats.Fetch(ctx, p.addr)
		if err != nil {
			return false, nil
		}
		snap = s
		return s.Synced, nil
	})
	return snap, err
}

// waitQuiet waits until neither a reconcile nor an API request has
// happened for quiet (the controller's own informers start after the
// cache reports synced, and initial reconciles follow) and returns the
// last snapshot.
func (p *operatorProc) waitQuiet(ctx context.Context, quiet, timeout time.Duration) (opstats.Snapshot, error) {
	last, err := p.snapshot(ctx)
	if err != nil {
		return last, err
	}
	since := time.Now()
	err = wait.PollUntilContextTimeout(ctx, quiet/4, timeout, false, func(ctx context.Context) (bool, error) {
		s, err := p.snapshot(ctx)
		if err != nil {
			return false, err
		}
		if s.ReconcileTotal() != last.ReconcileTotal() || opstats.Total(s.Requests, nil) != opstats.Total(last.Requests, nil) {
			since = time.Now()
		}
		last = s
		return time.Since(since) >= quiet, nil
	})
	return last, err
}

func (p *operatorProc) snapshot(ctx context.Context) (opstats.Snapshot, error) {
	return opstats.Fetch(ctx, p.addr)
}

// stop sends SIGTERM, waits up to stopGrace, then SIGKILL.
func (p *operatorProc) stop() error { return p.Stop(stopGrace) }
