//go:build bench

package realbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/lunadas/upgrade-operator/scenarios/bench/opstats"
)

// operatorProc is one run of the benchoperator binary.
type operatorProc struct {
	cmd  *exec.Cmd
	addr string
	log  string
	// exited is closed when the process has exited; err is then its Wait error.
	exited chan struct{}
	err    error
}

// exitErr returns the exit error if the process has exited.
func (p *operatorProc) exitErr() (bool, error) {
	select {
	case <-p.exited:
		return true, fmt.Errorf("operator exited: %v (log %s)", p.err, p.log)
	default:
		return false, nil
	}
}

// startOperator runs bin against kubeconfig watching namespaces (nil: all)
// and waits until its /snapshot endpoint answers.
func startOperator(ctx context.Context, bin, kubeconfig, dir, name string, namespaces []string) (*operatorProc, error) {
	addrFile := filepath.Join(dir, name+".addr")
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"--kubeconfig=" + kubeconfig, "--watch-namespaces=" + strings.Join(namespaces, ","), "--addr-file=" + addrFile}
	// BENCH_OPERATOR_ARGS adds flags, e.g. "--zap-log-level=5" to log every reconcile.
	args = append(args, strings.Fields(os.Getenv("BENCH_OPERATOR_ARGS"))...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &operatorProc{cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); logf.Close(); close(p.exited) }()
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		if exited, err := p.exitErr(); exited {
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
		if exited, err := p.exitErr(); exited {
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

// stop sends SIGTERM, waits up to 10 s, then SIGKILL.
func (p *operatorProc) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return errors.Join(errors.New("operator ignored SIGTERM for 10 s"), p.err)
	}
}
