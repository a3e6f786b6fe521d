//go:build e2e

package install

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/deploy"
	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

// startControlPlane starts the local control plane for one test; its logs
// are kept when the test fails.
func startControlPlane(t *testing.T) (*controlplane.ControlPlane, client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Logf: t.Logf})
	require.NoError(t, err, "start the local control plane (make controlplane builds its binaries)")
	t.Cleanup(func() {
		if t.Failed() {
			cp.KeepLogs()
		}
		if err := cp.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	t.Logf("control plane ready in %s", cp.StartupDuration.Round(time.Millisecond))
	c, err := client.New(cp.RESTConfig, client.Options{Scheme: realcluster.Scheme()})
	require.NoError(t, err)
	require.NoError(t, realcluster.InstallCRDs(ctx, c, deploy.CRDs, "crd/bases", time.Minute))
	return cp, c
}

func createNamespaces(t *testing.T, c client.Client, names ...string) {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, n := range names {
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": n}}})
	}
	require.NoError(t, CreateAll(context.Background(), c, objs))
}

func render(t *testing.T, data []byte, err error) []*unstructured.Unstructured {
	t.Helper()
	require.NoError(t, err)
	objs, err := Parse(data)
	require.NoError(t, err)
	require.NotEmpty(t, objs)
	return objs
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	require.NoError(t, err)
	return root
}

// buildManager builds cmd/upgrade-operator, the binary the image ships.
func buildManager(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "upgrade-operator")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/upgrade-operator")
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build ./cmd/upgrade-operator: %s", out)
	return bin
}

// managerArgs returns the args of the manager container of the rendered
// Deployment.
func managerArgs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	deps := Select(objs, "Deployment")
	require.Len(t, deps, 1)
	var d appsv1.Deployment
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(deps[0].Object, &d))
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" {
			return c.Args
		}
	}
	t.Fatalf("rendered Deployment %s has no manager container", Name(deps[0]))
	return nil
}

// process is a started command whose exit is reported on done.
type process struct {
	cmd  *exec.Cmd
	done chan error
	log  string
}

// startProcess runs bin with args, output to a log file; Cleanup stops it
// with SIGTERM (SIGKILL after 10 s) and prints the log's tail on failure.
func startProcess(t *testing.T, name, bin string, args []string, env []string) *process {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	require.NoError(t, cmd.Start())
	p := &process{cmd: cmd, done: make(chan error, 1), log: logPath}
	exited := make(chan struct{})
	go func() {
		err := cmd.Wait()
		f.Close()
		close(exited)
		if err == nil {
			err = fmt.Errorf("%s exited", name)
		}
		p.done <- fmt.Errorf("%s: %w (log: %s)", name, err, logPath)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("%s log (%s):\n%s", name, logPath, tail(logPath, 40))
		}
	})
	return p
}

func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// scrape GETs a Prometheus text endpoint and returns sample values by
// their full name with labels, e.g. `foo_count` or `foo{phase="Completed"}`.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	out := map[string]float64{}
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	require.NoError(t, s.Err())
	return out
}
