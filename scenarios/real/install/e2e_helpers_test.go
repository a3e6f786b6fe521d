//go:build e2e

package install

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
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

// scrape GETs a plain-HTTP Prometheus text endpoint and returns sample
// values by their full name with labels, e.g. `foo_count` or
// `foo{phase="Completed"}`.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return parseMetrics(t, resp.Body)
}

// getMetrics GETs the manager's HTTPS metrics endpoint (--metrics-secure)
// with token as the bearer token ("": none) and returns the status code
// and body. The certificate is the manager's self-signed one, not
// verified, as a ServiceMonitor's tlsConfig.insecureSkipVerify and curl -k.
func getMetrics(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the manager's self-signed certificate
	}}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// scrapeAs is scrape for the HTTPS endpoint with a bearer token.
func scrapeAs(t *testing.T, url, token string) map[string]float64 {
	t.Helper()
	code, body := getMetrics(t, url, token)
	require.Equal(t, http.StatusOK, code, "scrape %s: %s", url, body)
	return parseMetrics(t, strings.NewReader(body))
}

func parseMetrics(t *testing.T, r io.Reader) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	s := bufio.NewScanner(r)
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

// metricsScrapers creates, in namespace, ServiceAccount "metrics-scraper"
// bound (ClusterRoleBinding) to the ClusterRole reader, as docs/README.md
// and the chart's NOTES tell a user to, and ServiceAccount
// "metrics-stranger" bound to nothing; it returns a token of each. Call it
// before the scrape: the API server's RBAC authorizer sees a new binding
// from its informer, a moment later.
func metricsScrapers(t *testing.T, ctx context.Context, cfg *rest.Config, c client.Client, namespace, reader string) (scraper, stranger string) {
	t.Helper()
	objs := []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "metrics-scraper", "namespace": namespace}}},
		{Object: map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "metrics-stranger", "namespace": namespace}}},
		{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
			"metadata": map[string]any{"name": reader + "-scraper"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": reader},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "metrics-scraper", "namespace": namespace}}}},
	}
	require.NoError(t, CreateAll(ctx, c, objs), "the scrapers' ServiceAccounts and binding")
	token := func(name string) string {
		sa, err := ServiceAccountConfig(ctx, cfg, namespace, name, time.Hour)
		require.NoError(t, err)
		return sa.BearerToken
	}
	return token("metrics-scraper"), token("metrics-stranger")
}

// assertSecureMetrics checks the HTTPS endpoint at url the way a user meets
// it: no token 401, a token that is not one 401, a ServiceAccount not bound
// to the metrics-reader role 403, and the bound one gets the series, which
// it returns.
func assertSecureMetrics(t *testing.T, url, scraper, stranger string) map[string]float64 {
	t.Helper()
	code, body := getMetrics(t, url, "")
	assert.Equal(t, http.StatusUnauthorized, code, "no token: %s", body)
	code, body = getMetrics(t, url, "not-a-token")
	assert.Equal(t, http.StatusUnauthorized, code, "a bad token: %s", body)
	code, body = getMetrics(t, url, stranger)
	assert.Equal(t, http.StatusForbidden, code, "a ServiceAccount not bound to metrics-reader: %s", body)
	assert.NotContains(t, body, "upgrade_operator_")
	m := scrapeAs(t, url, scraper)
	n := 0
	for k := range m {
		if strings.HasPrefix(k, "upgrade_operator_") {
			n++
		}
	}
	assert.Positive(t, n, "the bound ServiceAccount gets the upgrade_operator_ series")
	t.Logf("secure metrics %s: no token 401, bad token 401, unbound 403, bound 200 with %d upgrade_operator_ samples", url, n)
	return m
}
