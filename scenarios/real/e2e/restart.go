package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
)

// RestartCase is the worker rollout the operator is killed during: 3
// replicas rolled one at a time, ~4 s per pod, old pods terminating 5 s.
var RestartCase = Case{
	ID: "restarts", Title: "operator SIGKILLed and restarted during the worker rollout",
	Worker: Shape{Replicas: 3, Strategy: RollingUpdate(1, 0), Grace: 30,
		Timing: Timing{Create: time.Second, Ready: 3 * time.Second, Delete: 5 * time.Second}},
	API: defaultAPI, WantPhase: upgradesv1alpha1.PhaseCompleted, Timeout: 4 * time.Minute,
}

// BuildOperator builds cmd/upgrade-operator into dir and returns its path.
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

// Process is one run of the operator binary.
type Process struct {
	cmd  *exec.Cmd
	log  *os.File
	done chan error
}

// StartOperator runs bin against kubeconfig, watching namespace only, with
// its output in logPath. Its webhook server is off
// (--appupgrade-webhooks=false): the test process serves the conversion
// webhook (realcluster.LocalConversion), which outlives every kill.
func StartOperator(bin, kubeconfig, namespace, logPath string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--kubeconfig="+kubeconfig, "--watch-namespaces="+namespace,
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--appupgrade-webhooks=false")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &Process{cmd: cmd, log: log, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); log.Close() }()
	return p, nil
}

// Kill sends SIGKILL and reaps the process. It fails if the process had
// already exited on its own.
func (p *Process) Kill() error {
	select {
	case err := <-p.done:
		return fmt.Errorf("operator pid %d exited before it was killed: %v (log %s)", p.cmd.Process.Pid, err, p.log.Name())
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.done
	return nil
}

// Stop sends SIGTERM, waits up to 10 s, then SIGKILL.
func (p *Process) Stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		return err
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		return errors.Join(errors.New("operator ignored SIGTERM for 10 s"), <-p.done)
	}
}

// Kill records one SIGKILL.
type Kill struct {
	N int
	// After is the random delay, from the process start (or, for the first,
	// from the worker image write) to the kill.
	After time.Duration
	// Phase is the upgrade's last recorded phase at the kill.
	Phase string
	// Worker is the worker's last recorded status "updated/replicas/available (term)".
	Worker string
}

// RunRestarts runs RestartCase with the operator as a subprocess of bin,
// SIGKILLing it kills times at moments drawn from seed during the worker
// rollout and restarting it each time; the last process runs to the end.
func RunRestarts(ctx context.Context, r *Runner, bin string, seed uint64, kills int) (*Result, []Kill, error) {
	c := RestartCase
	ns := "e2e-" + c.ID
	run, err := r.Prepare(ctx, c, ns)
	if err != nil {
		return nil, nil, err
	}
	defer run.Close()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	start := func(i int) (*Process, error) {
		return StartOperator(bin, r.Env.Kubeconfig, ns, filepath.Join(run.Dir, fmt.Sprintf("operator-%d.log", i)))
	}
	p, err := start(0)
	if err != nil {
		return nil, nil, err
	}
	if err := run.Apply(ctx); err != nil {
		return nil, nil, errors.Join(err, p.Stop())
	}
	// The first kill comes within a second of the worker image write.
	if err := run.waitForEvent(ctx, time.Minute, func(e eventlog.Event) bool {
		return e.Event == eventlog.DeploymentWrite && e.Name == WorkerName && e.Image == run.WorkerTarget
	}); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("worker image never written: %w", err), p.Stop())
	}
	var record []Kill
	for i := 1; i <= kills; i++ {
		after := time.Duration(rng.Int64N(int64(time.Second)))
		if i > 1 {
			after = 300*time.Millisecond + time.Duration(rng.Int64N(int64(2200*time.Millisecond)))
		}
		select {
		case <-time.After(after): // the random moment itself, not a synchronisation
		case <-ctx.Done():
			return nil, record, errors.Join(ctx.Err(), p.Stop())
		}
		if err := p.Kill(); err != nil {
			return nil, record, err
		}
		record = append(record, run.killRecord(i, after))
		if p, err = start(i); err != nil {
			return nil, record, err
		}
	}
	res, err := run.Wait(ctx, c.Timeout)
	return res, record, errors.Join(err, p.Stop())
}

// waitForEvent polls the event log until an event satisfies match.
func (run *Run) waitForEvent(ctx context.Context, timeout time.Duration, match func(eventlog.Event) bool) error {
	return wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		for _, e := range run.rec.Events() {
			if match(e) {
				return true, nil
			}
		}
		return false, nil
	})
}

func (run *Run) killRecord(n int, after time.Duration) Kill {
	k := Kill{N: n, After: after}
	for _, e := range run.rec.Events() {
		if e.Event == eventlog.Phase && e.Name == UpgradeName {
			k.Phase = e.Phase
		}
	}
	for _, e := range run.trace.Entries() {
		if e.Kind == "Deployment" && e.Name == WorkerName {
			term := "-"
			if e.Terminating != nil {
				term = fmt.Sprint(*e.Terminating)
			}
			k.Worker = fmt.Sprintf("gen %d/og %d, updated %d, replicas %d, available %d, terminating %s", e.Generation, e.ObservedGeneration, e.Updated, e.Replicas, e.Available, term)
		}
	}
	return k
}
