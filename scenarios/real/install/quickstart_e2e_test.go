//go:build e2e

package install

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// quickStart returns the command lines of the ```sh block after the
// "<!-- quickstart" marker in docs/README.md, comments stripped.
func quickStart(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "README.md"))
	require.NoError(t, err)
	text := string(data)
	i := strings.Index(text, "\n<!-- quickstart")
	require.GreaterOrEqual(t, i, 0, "docs/README.md has no '<!-- quickstart' marker before the quick start block")
	text = text[i:]
	start := strings.Index(text, "```sh\n")
	require.GreaterOrEqual(t, start, 0)
	text = text[start+len("```sh\n"):]
	end := strings.Index(text, "```")
	require.GreaterOrEqual(t, end, 0)
	var lines []string
	for _, l := range strings.Split(text[:end], "\n") {
		if j := strings.Index(l, " #"); j >= 0 {
			l = l[:j]
		}
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// The quick start of docs/README.md, typed as written, upgrades the demo
// app on the local control plane: each line runs in bash with KUBECONFIG
// set and bin/ first on PATH; `make run` stays in the background (as in a
// second terminal) and the final `get -w` is read until Completed.
func TestQuickStart(t *testing.T) {
	lines := quickStart(t)
	require.Len(t, lines, 6, "install, namespace, app, run, sample, watch: %q", lines)
	cp, _ := startControlPlane(t)
	root := repoRoot(t)
	metrics := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	env := append(os.Environ(), "KUBECONFIG="+cp.Kubeconfig, "PATH="+filepath.Join(root, "bin")+":"+os.Getenv("PATH"),
		// Not 8080/8081: other processes on this machine may hold them.
		fmt.Sprintf("RUN_FLAGS=--metrics-bind-address=%s --health-probe-bind-address=0", metrics),
		// Nor 9443: make install and make run share the conversion webhook's port.
		fmt.Sprintf("WEBHOOK_PORT=%d", freePort(t)))
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "make run"):
			background(t, ctx, root, env, line)
		case strings.HasSuffix(line, " -w"):
			watchUntil(t, ctx, root, env, line, "Completed", 4*time.Minute)
		default:
			cmd := exec.CommandContext(ctx, "bash", "-c", line)
			cmd.Dir, cmd.Env = root, env
			out, err := cmd.CombinedOutput()
			t.Logf("$ %s\n%s", line, out)
			require.NoError(t, err, "quick start line %q", line)
		}
	}
	m := scrape(t, "http://"+metrics+"/metrics")
	require.Equal(t, 1.0, m[handoffCount])

	// make install registered the admission webhook at make run's port: a
	// cycle and a second upgrade of job-worker are refused, naming why.
	for _, c := range []struct{ yaml, want string }{
		{cyclic, "dependency cycle a → b → a"},
		{overlapping, "is already being upgraded by applicationupgrade job-system/first"},
	} {
		cmd := exec.CommandContext(ctx, "kubectl", "apply", "-f", "-")
		cmd.Dir, cmd.Env, cmd.Stdin = root, env, strings.NewReader(c.yaml)
		out, err := cmd.CombinedOutput()
		t.Logf("$ kubectl apply -f - <<EOF ... EOF\n%s", out)
		require.Error(t, err, "refused at admission")
		require.Contains(t, string(out), c.want)
	}
}

// cyclic is refused for its cycle. overlapping creates "first" (job-worker
// to v3: active from creation on) and then "second" on job-worker too,
// which is refused for the overlap, naming "first".
const cyclic = `apiVersion: upgrades.lunadas.dev/v1beta1
kind: ApplicationUpgrade
metadata: {name: cyclic, namespace: job-system}
spec:
  components:
    - {name: a, deploymentRef: {name: job-worker}, image: "registry.example.com/job-worker:v3.0.0", dependsOn: [b]}
    - {name: b, deploymentRef: {name: job-api}, image: "registry.example.com/job-api:v3.0.0", dependsOn: [a]}
`

// background starts line in its own process group (make, go run and the
// manager) and stops the group at cleanup.
func background(t *testing.T, ctx context.Context, dir string, env []string, line string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "make-run.log")
	f, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Logf("$ %s &   (log: %s)", line, logPath)
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("make run log:\n%s", tail(logPath, 30))
		}
	})
}

// watchUntil runs a watching command and reads its output until a line
// contains want; the command is then stopped.
func watchUntil(t *testing.T, ctx context.Context, dir string, env []string, line, want string, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "exec "+line)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	t.Logf("$ %s", line)
	found := false
	s := bufio.NewScanner(out)
	for s.Scan() {
		t.Log(s.Text())
		if strings.Contains(s.Text(), want) {
			found = true
			break
		}
	}
	cancel()
	_, _ = io.Copy(io.Discard, out)
	_ = cmd.Wait()
	require.True(t, found, "%q never printed %q within %s", line, want, timeout)
}

const overlapping = `apiVersion: upgrades.lunadas.dev/v1beta1
kind: ApplicationUpgrade
metadata: {name: first, namespace: job-system}
spec:
  components:
    - {name: worker, deploymentRef: {name: job-worker}, image: "registry.example.com/job-worker:v3.0.0", containerName: worker}
---
apiVersion: upgrades.lunadas.dev/v1beta1
kind: ApplicationUpgrade
metadata: {name: second, namespace: job-system}
spec:
  components:
    - {name: worker, deploymentRef: {name: job-worker}, image: "registry.example.com/job-worker:v4.0.0", containerName: worker}
`
