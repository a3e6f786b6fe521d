// Package operatorproc runs an operator binary as a child process of the
// test or bench driver: its output in a log file of its own, its exit
// reported with its pid and log, SIGKILL (a crash), and SIGTERM with a
// grace period (a stop). The real backend's out-of-process operator
// (scenarios/cluster, make test-e2e) and the bench's instrumented
// operator (scenarios/bench/realbench) both run on it.
package operatorproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is one run of an operator binary.
type Process struct {
	cmd *exec.Cmd
	log string
	// done is closed when the process has exited; err is then its Wait error.
	done chan struct{}
	err  error
}

// Start runs bin with args, its stdout and stderr in the file logPath
// (created). On Linux the kernel kills it if the driver dies first (go
// test's -timeout, a crash).
func Start(bin string, args []string, logPath string) (*Process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &Process{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); log.Close(); close(p.done) }()
	return p, nil
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Log is the path of the process's output.
func (p *Process) Log() string { return p.log }

// Exited returns the error of a process that has exited, naming its pid,
// its exit status and its log; nil while it runs.
func (p *Process) Exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("the operator process (pid %d) exited: %v (log %s)", p.Pid(), p.err, p.log)
	default:
		return nil
	}
}

// Kill sends SIGKILL and reaps the process; it fails if the process had
// already exited on its own.
func (p *Process) Kill() error {
	if err := p.Exited(); err != nil {
		return err
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.done
	return nil
}

// Stop sends SIGTERM and waits up to grace for the process to exit, then
// SIGKILL. It fails if the process had already exited on its own, ignored
// SIGTERM for grace, or exited with an error status of its own (a
// graceful shutdown that failed); death by the SIGTERM itself is a stop.
func (p *Process) Stop(grace time.Duration) error {
	if err := p.Exited(); err != nil {
		return err
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	// a frozen process (Freeze) acts on the SIGTERM only once continued
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		if p.err != nil && !terminatedBy(p.err, syscall.SIGTERM) {
			return fmt.Errorf("the operator process (pid %d) failed to stop: %v (log %s)", p.Pid(), p.err, p.log)
		}
		return nil
	case <-timer.C:
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("the operator process (pid %d) ignored SIGTERM for %s (log %s)", p.Pid(), grace, p.log)
	}
}

// terminatedBy reports whether err is the exit of a process killed by sig.
func terminatedBy(err error, sig syscall.Signal) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == sig
}

// Done is closed once the process has exited (Exited then says how).
func (p *Process) Done() <-chan struct{} { return p.done }

// Freeze sends SIGSTOP: the process runs no code until Thaw, so its
// timers, its lease renewals and its network stall, as a process whose
// node is partitioned or paused does. It fails if the process has exited.
func (p *Process) Freeze() error {
	if err := p.Exited(); err != nil {
		return err
	}
	return p.cmd.Process.Signal(syscall.SIGSTOP)
}

// Thaw sends SIGCONT to a frozen process; a no-op once it has exited.
func (p *Process) Thaw() error {
	if p.Exited() != nil {
		return nil
	}
	return p.cmd.Process.Signal(syscall.SIGCONT)
}
