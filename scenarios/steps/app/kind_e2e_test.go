//go:build e2e

package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
	"github.com/lunadas/upgrade-operator/simulator"
)

var realKind = flag.Bool("real.kind", false, "create a Kind cluster (sigs.k8s.io/kind library, Docker) and run the scenarios on it, real kubelets and the pause image under the scenarios' image names (make test-e2e-kind); without a reachable Docker engine, print one line and exit 0. KIND_NODE_IMAGE picks the node image, E2E_KIND_KEEP=1 keeps the cluster")

// kindClusterName is the Kind cluster -real.kind creates and deletes.
const kindClusterName = "upgrade-operator-e2e"

// kindBaseImage runs under every image name a scenario uses: it starts at
// once, is Ready without a probe and exits on SIGTERM.
const kindBaseImage = "registry.k8s.io/pause:3.10"

// kind is a Kind cluster the real tests run on (-real.kind).
type kind struct {
	provider   *kindcluster.Provider
	kubeconfig string

	mu     sync.Mutex
	tagged map[string]bool
}

// startKind creates the Kind cluster; skip says why it cannot run here
// (no Docker engine), with a nil kind.
func startKind() (k *kind, skip string, err error) {
	if reason := dockerUnreachable(); reason != "" {
		return nil, reason, nil
	}
	dir, err := os.MkdirTemp("", "e2e-kind-")
	if err != nil {
		return nil, "", err
	}
	k = &kind{provider: kindcluster.NewProvider(kindcluster.ProviderWithDocker()), kubeconfig: filepath.Join(dir, "kubeconfig"), tagged: map[string]bool{}}
	opts := []kindcluster.CreateOption{kindcluster.CreateWithKubeconfigPath(k.kubeconfig), kindcluster.CreateWithWaitForReady(5 * time.Minute),
		kindcluster.CreateWithDisplayUsage(false), kindcluster.CreateWithDisplaySalutation(false)}
	if img := os.Getenv("KIND_NODE_IMAGE"); img != "" {
		opts = append(opts, kindcluster.CreateWithNodeImage(img))
	}
	began := time.Now()
	if err := k.provider.Create(kindClusterName, opts...); err != nil {
		_ = k.provider.Delete(kindClusterName, k.kubeconfig)
		return nil, "", fmt.Errorf("create kind cluster %s: %w", kindClusterName, err)
	}
	fmt.Printf("kind cluster %s ready in %s (kubeconfig %s)\n", kindClusterName, time.Since(began).Round(time.Second), k.kubeconfig)
	// The node's API server calls the harness's conversion webhook on the
	// host: at the kind network's gateway, not 127.0.0.1.
	if realcluster.WebhookHost, err = kindGateway(); err != nil {
		return nil, "", errors.Join(err, k.stop(true))
	}
	return k, "", nil
}

// stop deletes the cluster (E2E_KIND_KEEP=1 keeps it), its logs first
// under artifacts/ when failed.
func (k *kind) stop(failed bool) error {
	if failed {
		if root, err := controlplane.RepoRoot(); err == nil {
			dir := filepath.Join(root, "artifacts", "kind-logs-"+time.Now().UTC().Format("20060102-150405"))
			if err := k.provider.CollectLogs(kindClusterName, dir); err == nil {
				fmt.Printf("kind cluster logs kept in %s\n", dir)
			}
		}
	}
	if os.Getenv("E2E_KIND_KEEP") == "1" {
		fmt.Printf("kind cluster %s kept (kind delete cluster --name %s)\n", kindClusterName, kindClusterName)
		return nil
	}
	return k.provider.Delete(kindClusterName, k.kubeconfig)
}

// PodTemplate implements RealKubelets: a real kubelet ignores kwok's
// delete-delay annotation, so the termination delay becomes a preStop
// sleep (no shell needed: the kubelet sleeps).
func (k *kind) PodTemplate(t *corev1.PodTemplateSpec) {
	d, err := time.ParseDuration(t.Annotations[simulator.AnnotationPodDeleteDelay])
	if err != nil || d < time.Second {
		return
	}
	secs := int64(math.Ceil(d.Seconds()))
	for i := range t.Spec.Containers {
		t.Spec.Containers[i].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: secs}}}
	}
}

// Images implements RealKubelets: every image is kindBaseImage tagged
// under its name on every node (as `kind load` does), so the kubelet finds
// it without a registry; ":does-not-exist" is left unpullable.
func (k *kind) Images(ctx context.Context, images []string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	nodes, err := k.provider.ListInternalNodes(kindClusterName)
	if err != nil {
		return err
	}
	for _, img := range images {
		if k.tagged[img] || strings.HasSuffix(img, ":does-not-exist") {
			continue
		}
		for _, n := range nodes {
			if len(k.tagged) == 0 {
				if err := n.CommandContext(ctx, "crictl", "pull", kindBaseImage).Run(); err != nil {
					return fmt.Errorf("pull %s on kind node %s: %w", kindBaseImage, n, err)
				}
			}
			if err := n.CommandContext(ctx, "ctr", "--namespace=k8s.io", "images", "tag", "--force", kindBaseImage, img).Run(); err != nil {
				return fmt.Errorf("tag %s as %s on kind node %s: %w", kindBaseImage, img, n, err)
			}
		}
		k.tagged[img] = true
	}
	return nil
}

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
