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

	done     chan struct{} // closed when the process has exited
	mu       sync.Mutex
	waitErr  error
	stopping bool
}

// startProcessPath starts the executable at path as component name with
// args, logging to logDir/name.log. extraEnv entries (KEY=VALUE) are added
// to the inherited environment.
func startProcessPath(path, logDir, name string, args, extraEnv []string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("controlplane: open log for %s: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.SysProcAttr = sysProcAttr()
	fmt.Fprintf(logFile, "# %s %s\n", cmd.Path, strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("controlplane: start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logFile: logFile, done: make(chan struct{})}
	go p.wait()
	return p, nil
}

func (p *process) wait() {
	err := p.cmd.Wait()
	p.mu.Lock()
	p.waitErr = err
	p.mu.Unlock()
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
	p.mu.Unlock()
	pgid := p.cmd.Process.Pid
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
