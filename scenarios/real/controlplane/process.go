//go:build unix

package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one control-plane component running as a child process in a
// process group of its own, its stdout and stderr going to one log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File

	done     chan struct{} // closed when the process has exited for good
	mu       sync.Mutex
	waitErr  error
	stopping bool

	// restart, when set, is the policy for a process that exits on its own
	// (see restartPolicy); restarts counts the restarts made so far.
	restart  *restartPolicy
	restarts int
}

// restartPolicy restarts a stateless component that exits on its own, as
// systemd's Restart=on-failure would: at most max times, each restart
// reported through logf with the exit status and the log's last lines.
// Only kwok has one: kwok v0.8.0 can die at start-up with "fatal error:
// concurrent map writes" in github.com/wzshiming/easycel v0.6.0
// (types.go getTrait writes a package-level cache without a lock when the
// node and pod controllers build their first CEL environments at once;
// no fixed release is served), and kwok keeps no state of its own: it
// re-lists Nodes and Pods from the API server when it starts.
type restartPolicy struct {
	max  int
	logf func(format string, args ...any)
}

// startProcessPath starts the executable at path as component name with
// args, logging to logDir/name.log. extraEnv entries (KEY=VALUE) are added
// to the inherited environment.
// restart, when non-nil, restarts the process when it exits on its own.
func startProcessPath(path, logDir, name string, args, extraEnv []string, restart *restartPolicy) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("controlplane: open log for %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, logFile: logFile, done: make(chan struct{}), restart: restart}
	newCmd := func() *exec.Cmd {
		cmd := exec.Command(path, args...)
		cmd.Stdout = logFile
		cmd.Stderr = logFile
		cmd.Env = append(os.Environ(), extraEnv...)
		cmd.SysProcAttr = sysProcAttr()
		return cmd
	}
	fmt.Fprintf(logFile, "# %s %s\n", path, strings.Join(args, " "))
	p.cmd = newCmd()
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("controlplane: start %s: %w", name, err)
	}
	go p.wait(newCmd)
	return p, nil
}

// wait reaps the process; under a restart policy it starts it again (at
// most restart.max times) unless stop was called. done is closed once the
// process has exited for good.
func (p *process) wait(newCmd func() *exec.Cmd) {
	for {
		p.mu.Lock()
		cmd := p.cmd
		p.mu.Unlock()
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		if p.stopping || p.restart == nil || p.restarts >= p.restart.max {
			p.mu.Unlock()
			break
		}
		p.restarts++
		n := p.restarts
		fmt.Fprintf(p.logFile, "# controlplane: %s exited (%v); restart %d of %d\n", p.name, err, n, p.restart.max)
		next := newCmd()
		startErr := next.Start()
		if startErr == nil {
			p.cmd = next
		} else {
			p.waitErr = fmt.Errorf("restart %d: %w (after: %v)", n, startErr, err)
		}
		p.mu.Unlock()
		p.restart.logf("controlplane: %s exited (%v), restarted (%d of %d); see %s", p.name, err, n, p.restart.max, p.logPath)
		if startErr != nil {
			break
		}
	}
	p.logFile.Close()
	close(p.done)
}

// exited returns a non-nil error when the process has exited without being
// asked to stop: its exit status and the tail of its log.
func (p *process) exited() error {
	select {
	case <-p.done:
	default:
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		return nil
	}
	return fmt.Errorf("controlplane: %s exited (%v); see %s, last lines:\n%s", p.name, p.waitErr, p.logPath, logTail(p.logPath, 15))
}

// stop sends SIGTERM to the process group, waits up to timeout, then sends
// SIGKILL to the group and waits for the process to be reaped. The group is
// signalled only while its leader is unreaped, so its id cannot have been
// reused by another process.
func (p *process) stop(timeout time.Duration) error {
	p.mu.Lock()
	p.stopping = true
	pgid := p.cmd.Process.Pid
	p.mu.Unlock()
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("controlplane: terminate %s: %w", p.name, err)
	}
	select {
	case <-p.done:
	case <-time.After(timeout):
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("controlplane: kill %s: %w", p.name, err)
		}
		<-p.done
	}
	return nil
}

// logTail returns the last n lines of the file at path.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
