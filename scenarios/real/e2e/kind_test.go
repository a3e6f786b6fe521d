//go:build e2ekind

package e2e_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/e2e"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

// kindClusterName is the Kind cluster the suite creates and deletes.
const kindClusterName = "upgrade-operator-e2e"

var kindEnv e2e.Env

// TestMain creates a Kind cluster with the sigs.k8s.io/kind library when a
// Docker engine is reachable; otherwise it prints one line saying why it
// skipped and exits 0. KIND_NODE_IMAGE picks the node image; E2E_KIND_KEEP=1
// keeps the cluster.
func TestMain(m *testing.M) {
	if reason := dockerUnreachable(); reason != "" {
		fmt.Printf("test-e2e-kind: skipped: %s\n", reason)
		os.Exit(0)
	}
	provider := cluster.NewProvider(cluster.ProviderWithDocker())
	dir, err := os.MkdirTemp("", "e2e-kind-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "test-e2e-kind:", err)
		os.Exit(1)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	opts := []cluster.CreateOption{cluster.CreateWithKubeconfigPath(kubeconfig), cluster.CreateWithWaitForReady(5 * time.Minute),
		cluster.CreateWithDisplayUsage(false), cluster.CreateWithDisplaySalutation(false)}
	if img := os.Getenv("KIND_NODE_IMAGE"); img != "" {
		opts = append(opts, cluster.CreateWithNodeImage(img))
	}
	began := time.Now()
	if err := provider.Create(kindClusterName, opts...); err != nil {
		fmt.Fprintf(os.Stderr, "test-e2e-kind: create kind cluster %s: %v\n", kindClusterName, err)
		_ = provider.Delete(kindClusterName, kubeconfig)
		os.Exit(1)
	}
	fmt.Printf("test-e2e-kind: kind cluster %s ready in %s (kubeconfig %s)\n", kindClusterName, time.Since(began).Round(time.Second), kubeconfig)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	code := 1
	if err == nil {
		// The node's API server calls the harness's conversion and admission
		// webhooks on the host: at the kind network's gateway, not 127.0.0.1.
		realcluster.WebhookHost, err = kindGateway()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "test-e2e-kind: load kubeconfig:", err)
	} else {
		kindEnv = e2e.Env{Name: "kind", RESTConfig: cfg, Kubeconfig: kubeconfig, Images: e2e.KindImages, RealKubelet: true}
		code = m.Run()
	}
	if code != 0 {
		collectKindLogs(provider)
	}
	if os.Getenv("E2E_KIND_KEEP") == "1" {
		fmt.Printf("test-e2e-kind: cluster %s kept (kind delete cluster --name %s)\n", kindClusterName, kindClusterName)
	} else if err := provider.Delete(kindClusterName, kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "test-e2e-kind: delete cluster:", err)
	}
	os.Exit(code)
}

// TestKindE2E runs the same suite as TestE2E on the Kind cluster: real
// kubelets, public pause images, termination delays from preStop sleeps.
func TestKindE2E(t *testing.T) { runSuite(t, kindEnv) }

// dockerUnreachable returns why Kind cannot run here, or "".
func dockerUnreachable() string {
	if _, err := exec.LookPath("docker"); err != nil {
		return "no docker client on PATH (Kind needs a Docker engine)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	if err == nil && strings.TrimSpace(string(out)) != "" {
		return ""
	}
	why := strings.TrimSpace(string(out))
	if i := strings.LastIndex(why, "\n"); i >= 0 {
		why = strings.TrimSpace(why[i+1:])
	}
	if why == "" && err != nil {
		why = err.Error()
	}
	return "no Docker engine reachable (docker info: " + why + ")"
}

// collectKindLogs exports the cluster's logs (kubelet, containers, control
// plane) under artifacts/ and prints where.
func collectKindLogs(provider *cluster.Provider) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return
	}
	dir := filepath.Join(root, "artifacts", "kind-logs-"+time.Now().UTC().Format("20060102-150405"))
	if err := provider.CollectLogs(kindClusterName, dir); err != nil {
		fmt.Fprintln(os.Stderr, "test-e2e-kind: collect logs:", err)
		return
	}
	fmt.Printf("test-e2e-kind: cluster logs kept in %s\n", dir)
}

// kindGateway is the IPv4 gateway of Docker's "kind" network: the host's
// address as the Kind node sees it.
func kindGateway() (string, error) {
	out, err := exec.Command("docker", "network", "inspect", "kind", "--format", "{{range .IPAM.Config}}{{.Gateway}} {{end}}").Output()
	if err != nil {
		return "", fmt.Errorf("find the kind network's gateway (docker network inspect kind): %w", err)
	}
	for _, f := range strings.Fields(string(out)) {
		if ip := net.ParseIP(f); ip != nil && ip.To4() != nil {
			return f, nil
		}
	}
	return "", fmt.Errorf("the kind network has no IPv4 gateway (docker network inspect kind: %q)", strings.TrimSpace(string(out)))
}
