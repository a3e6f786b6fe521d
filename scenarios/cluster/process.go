package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/operatorproc"
)

// Killer is implemented by the clusters whose operator can be killed as a
// process is: SIGKILL (the simulator: a crash), then a new process with a
// cold cache. Real implements it only with the operator out of process
// (RealSuite.Operator); the in-process manager cannot be SIGKILLed.
type Killer interface {
	// KillOperator kills the operator at once and starts a new one without
	// waiting for it to be ready (a kill may come during its start-up).
	KillOperator(ctx context.Context) error
}

// BuildOperator builds cmd/upgrade-operator, the product's binary, into dir
// with `go build` and returns its path.
func BuildOperator(ctx context.Context, dir string) (string, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "upgrade-operator")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/upgrade-operator")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/upgrade-operator: %w\n%s", err, out)
	}
	return bin, nil
}

// startProcess runs bin against kubeconfig, watching namespace only, its
// output in logPath. Its webhook server is off (--appupgrade-webhooks=false):
// the test process serves the conversion webhook
// (realcluster.LocalConversion), which outlives every kill.
// extra adds flags (leader election: electionArgs).
func startProcess(bin, kubeconfig, namespace, logPath string, extra ...string) (*operatorproc.Process, error) {
	return operatorproc.Start(bin, append([]string{"--kubeconfig=" + kubeconfig, "--watch-namespaces=" + namespace,
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--appupgrade-webhooks=false"}, extra...), logPath)
}

// stopGrace is how long a stopped operator process may take to exit
// before it is killed: controller-runtime's default
// GracefulShutdownTimeout (pkg/manager/internal.go, 30 s).
const stopGrace = 30 * time.Second

// waitWorkers waits until process p has logged that the ApplicationUpgrade
// controller started its workers (its caches synced).
func waitWorkers(ctx context.Context, p *operatorproc.Process, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		if err := p.Exited(); err != nil {
			return false, err
		}
		out, err := os.ReadFile(p.Log())
		if err != nil {
			return false, err
		}
		for _, line := range bytes.Split(out, []byte("\n")) {
			if bytes.Contains(line, []byte("Starting workers")) && bytes.Contains(line, []byte("applicationupgrade")) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return errors.Join(fmt.Errorf("the operator process (pid %d) did not start its ApplicationUpgrade workers within %s (log %s)", p.Pid(), timeout, p.Log()), err)
	}
	return nil
}

// startProcess starts the operator binary for r's namespace, its log in
// r.logs/operator-N.log; waitStarted waits until its controller runs.
func (r *Real) startProcess(ctx context.Context, waitStarted bool) error {
	if r.opts.Policy.Customize != nil || r.opts.Policy.Wrap != nil {
		return fmt.Errorf("operator build %s needs the in-process operator, not the binary %s: %w", r.opts.Policy, r.suite.Operator, ErrUnsupported)
	}
	if r.logs == "" {
		dir, err := os.MkdirTemp("", "operator-"+r.ns+"-")
		if err != nil {
			return err
		}
		r.logs = dir
	}
	r.mu.Lock()
	n := r.procs
	r.procs++
	r.mu.Unlock()
	p, err := startProcess(r.suite.Operator, r.suite.Kubeconfig, r.ns, filepath.Join(r.logs, fmt.Sprintf("operator-%d.log", n)))
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.proc = p
	r.mu.Unlock()
	if waitStarted {
		return waitWorkers(ctx, p, time.Minute)
	}
	return nil
}

// KillOperator implements Killer: SIGKILL to the operator process, and a
// new process at once. Only the out-of-process operator can be killed.
func (r *Real) KillOperator(ctx context.Context) error {
	if r.electing() {
		return fmt.Errorf("SIGKILL of the operator: two replicas run under leader election; kill one with a fault of its own: %w", ErrUnsupported)
	}
	r.mu.Lock()
	p := r.proc
	r.proc = nil
	r.mu.Unlock()
	if p == nil {
		return fmt.Errorf("SIGKILL needs the operator out of process (-real.operator=process): %w", ErrUnsupported)
	}
	if err := p.Kill(); err != nil {
		return err
	}
	return r.startProcess(ctx, false)
}

// KillOperator implements Killer: the catalog's crash@0s (the leader
// crashes now and restarts the fault's default down later, with a cold
// cache), recorded among the faults that fired.
func (s *Sim) KillOperator(ctx context.Context) error {
	fs, err := faults.ParseFaults("crash@0s")
	if err != nil {
		return err
	}
	return s.Inject(ctx, fs[0])
}

// OutOfProcess reports whether the operator runs as a process of its own.
func (r *Real) OutOfProcess() bool { return r.suite.Operator != "" }

// OperatorLogs is the folder of the operator processes' logs ("" in-process).
func (r *Real) OperatorLogs() string { return r.logs }
