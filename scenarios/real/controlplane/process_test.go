//go:build unix

package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRestartPolicyRestartsThenGivesUp: a component that keeps failing is
// started 1+max times, each restart is reported, and then it counts as
// exited with its last status.
func TestRestartPolicyRestartsThenGivesUp(t *testing.T) {
	dir := t.TempDir()
	counter := filepath.Join(dir, "runs")
	var mu sync.Mutex
	var reports []string
	logf := func(format string, args ...any) {
		mu.Lock()
		reports = append(reports, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	p, err := startProcessPath("/bin/sh", dir, "flaky", []string{"-c", "echo run >> " + counter + "; exit 3"}, nil, &restartPolicy{max: 2, logf: logf})
	require.NoError(t, err)
	<-p.done
	runs, err := os.ReadFile(counter)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(runs), "run"), "started once and restarted twice")
	assert.Equal(t, 2, p.restarts)
	mu.Lock()
	assert.Len(t, reports, 2)
	assert.Contains(t, reports[0], "flaky exited (exit status 3), restarted (1 of 2)")
	mu.Unlock()
	exitErr := p.exited()
	require.Error(t, exitErr)
	assert.Contains(t, exitErr.Error(), "exit status 3")
	logText, err := os.ReadFile(filepath.Join(dir, "flaky.log"))
	require.NoError(t, err)
	assert.Contains(t, string(logText), "restart 2 of 2")
}

// TestRestartPolicyNotAfterStop: a component asked to stop is not started
// again, and its exit is not an error.
func TestRestartPolicyNotAfterStop(t *testing.T) {
	dir := t.TempDir()
	p, err := startProcessPath("/bin/sh", dir, "steady", []string{"-c", "exec sleep 60"}, nil,
		&restartPolicy{max: 3, logf: func(string, ...any) { t.Error("restarted after stop") }})
	require.NoError(t, err)
	require.NoError(t, p.stop(10*time.Second))
	<-p.done
	assert.Equal(t, 0, p.restarts)
	assert.NoError(t, p.exited())
}
