//go:build linux

package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// realNode is the running kubelet and containerd.
type realNode struct {
	dir       string // WorkDir/node
	socket    string // containerd's gRPC socket
	kubelet   *process
	container *process
	logf      func(string, ...any)
}

// nodeDirs are the paths under WorkDir/node.
type nodeDirs struct{ root string }

func (d nodeDirs) path(elem ...string) string {
	return filepath.Join(append([]string{d.root}, elem...)...)
}

// checkRealNode returns one error naming everything the real node needs
// and does not find: the kubelet in binDir, containerd, ctr and runc on
// PATH, the loopback CNI plugin, and the image archive.
func checkRealNode(binDir, images string) error {
	var errs []error
	if _, err := os.Stat(filepath.Join(binDir, kubeletBin)); err != nil {
		errs = append(errs, fmt.Errorf("controlplane: %s not found: run 'make node'", displayPath(filepath.Join(binDir, kubeletBin))))
	}
	for _, name := range []string{"containerd", "ctr", "runc"} {
		if _, err := exec.LookPath(name); err != nil {
			errs = append(errs, fmt.Errorf("controlplane: %s not on PATH: run 'make node' (installs Debian's containerd and runc)", name))
		}
	}
	if _, err := os.Stat(filepath.Join(cniBinDir, "loopback")); err != nil {
		errs = append(errs, fmt.Errorf("controlplane: %s/loopback not found: run 'make node' (installs Debian's containernetworking-plugins)", cniBinDir))
	}
	if _, err := os.Stat(images); errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, fmt.Errorf("controlplane: image archive %s not found: run 'make node'", displayPath(images)))
	}
	return errors.Join(errs...)
}

// startRealNode starts containerd, imports the image archive, starts the
// kubelet and waits until its Node is Ready, then removes the
// node.kubernetes.io/not-ready taint. The node-lifecycle controller, which
// would remove it, is not run: it would also mark the kwok node (whose
// Stages send no heartbeat) unreachable and evict its pods.
func (cp *ControlPlane) startRealNode(ctx context.Context, client kubernetes.Interface, k *pki, server string) error {
	d := nodeDirs{root: filepath.Join(cp.WorkDir, "node")}
	for _, dir := range []string{d.path("containerd"), d.path("cni"), d.path("kubelet"), d.path("pod-logs")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("controlplane: real node: %w", err)
		}
	}
	rn := &realNode{dir: d.root, socket: d.path("containerd.sock"), logf: cp.opts.Logf}
	cp.realNode = rn
	if err := writeFiles(map[string]string{
		d.path("containerd", "config.toml"):   containerdConfig(d, rn.socket),
		d.path("cni", "10-loopback.conflist"): loopbackConflist,
	}); err != nil {
		return err
	}
	containerdPath, err := exec.LookPath("containerd")
	if err != nil {
		return fmt.Errorf("controlplane: real node: %w", err)
	}
	if rn.container, err = cp.runPath(containerdPath, "containerd", []string{"--config", d.path("containerd", "config.toml")}); err != nil {
		return err
	}
	if err := cp.poll(ctx, "containerd on "+rn.socket, func(ctx context.Context) (bool, error) {
		_, err := rn.ctr(ctx, "version")
		return err == nil, err
	}); err != nil {
		return fmt.Errorf("%w: %w", ErrRealNodeUnavailable, err)
	}
	if out, err := rn.ctr(ctx, "images", "import", cp.opts.NodeImages); err != nil {
		return fmt.Errorf("controlplane: import %s into containerd: %w\n%s", cp.opts.NodeImages, err, out)
	}
	kubeletPorts, err := freePorts(2)
	if err != nil {
		return err
	}
	kubeconfig := d.path("kubelet.kubeconfig")
	nodeCert, err := newClientCert(k.ca, "system:node:"+RealNodeName, "system:nodes")
	if err != nil {
		return fmt.Errorf("controlplane: real node: %w", err)
	}
	if err := writeKubeconfig(kubeconfig, server, k.caPEM, nodeCert); err != nil {
		return err
	}
	if err := writeFiles(map[string]string{d.path("kubelet.yaml"): kubeletConfig(d, rn.socket, kubeletPorts[0], kubeletPorts[1])}); err != nil {
		return err
	}
	if rn.kubelet, err = cp.runPath(filepath.Join(cp.BinDir, kubeletBin), kubeletBin, kubeletArgs(d, kubeconfig)); err != nil {
		return err
	}
	if err := cp.waitNodeReady(ctx, client, RealNodeName, "set by the kubelet"); err != nil {
		return err
	}
	return removeNotReadyTaint(ctx, client, RealNodeName)
}

// kubeletArgs: the flags that have no KubeletConfiguration field.
// --node-ip 127.0.0.1 keeps the API server's connections to the kubelet on
// loopback; the kubelet's node-address status setter refuses a loopback
// node IP (k8s.io/kubernetes pkg/kubelet/kubelet_node_status.go,
// validateNodeIP) and logs it on every status update, so the Node has no
// addresses, which nothing here needs.
func kubeletArgs(d nodeDirs, kubeconfig string) []string {
	return []string{
		"--config=" + d.path("kubelet.yaml"),
		"--kubeconfig=" + kubeconfig,
		"--root-dir=" + d.path("kubelet"),
		"--cert-dir=" + d.path("kubelet", "pki"),
		"--hostname-override=" + RealNodeName,
		"--node-ip=127.0.0.1",
		"--node-labels=" + RealNodeLabel + "=true",
		"--v=1",
	}
}

// kubeletConfig is the KubeletConfiguration (kubelet.config.k8s.io/v1beta1,
// k8s.io/kubelet/config/v1beta1 types.go) for this machine kind: cgroup v1
// with the cgroupfs driver and no per-QoS cgroups or node-allocatable
// enforcement (no systemd, no cgroup hierarchy of our own), swap tolerated,
// the API on 127.0.0.1 only. Its own server trusts only anonymous requests
// from loopback (the API server's logs and exec), authorised AlwaysAllow;
// eviction thresholds are near zero so a busy shared machine does not evict
// test pods. syncFrequency 10s (default 1m): a Secret volume is refreshed
// only when its pod is synced again ("as long as the kubelet sync period +
// cache propagation delay", Kubernetes docs, Secrets → "Mounted Secrets
// are updated automatically"), and the operator's webhook server waits for
// the certificate its rotator wrote into the empty Secret the chart
// created (make test-node-incluster).
func kubeletConfig(d nodeDirs, socket string, port, healthzPort int) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
containerRuntimeEndpoint: unix://%s
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
cgroupsPerQOS: false
enforceNodeAllocatable: []
podLogsDir: %s
registerWithTaints:
  - key: %s
    value: "true"
    effect: NoSchedule
serializeImagePulls: false
syncFrequency: 10s
rotateCertificates: false
serverTLSBootstrap: false
resolvConf: /etc/resolv.conf
evictionHard:
  memory.available: 10Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`, port, healthzPort, socket, d.path("pod-logs"), RealNodeTaintKey)
}

// containerdConfig is containerd 1.6's configuration (version 2): root,
// state, socket and the plugins' directories all under the node directory,
// so it runs beside any system containerd; the CRI plugin uses runc with
// cgroupfs, the sandbox image from the imported archive, and the CNI
// configuration directory holding only loopbackConflist.
// restrict_oom_score_adj: the kubelet asks for oom_score_adj -998 for
// sandboxes (and -997 for Guaranteed pods); lowering it needs
// CAP_SYS_RESOURCE, which these machines' sandboxes do not grant, and runc
// then fails every sandbox with "can't get final child's PID from pipe:
// EOF" (its nsexec logs "failed to update /proc/self/oom_score_adj:
// Permission denied"). containerd's option clamps the value to the
// current process's score, as it does for rootless runs
// (pkg/cri/server/container_create_linux.go, RestrictOOMScoreAdj).
func containerdConfig(d nodeDirs, socket string) string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
`, d.path("containerd", "root"), d.path("containerd", "state"), socket, socket+".ttrpc",
		d.path("containerd", "opt"), nodeimagesPause, cniBinDir, d.path("cni"))
}

// loopbackConflist is the real node's only CNI network: the loopback
// plugin, so pods have lo and nothing else (no pod reaches another or the
// host; probes are exec probes).
const loopbackConflist = `{
  "cniVersion": "1.0.0",
  "name": "loopback-only",
  "plugins": [{"type": "loopback"}]
}
`

// nodeimagesPause is nodeimages.PauseImage (not imported: nodeimages
// imports this package for RepoRoot).
const nodeimagesPause = "localhost/upgrade-operator/pause:3.10"

// ctr runs containerd's ctr against this node's containerd, namespace k8s.io
// (the CRI plugin's).
func (rn *realNode) ctr(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", rn.socket, "--namespace", "k8s.io"}, args...)...)
	return cmd.CombinedOutput()
}

// stop stops the kubelet, removes every container (containerd's shims
// outlive containerd, and with them the containers), stops containerd,
// and unmounts what the kubelet and containerd left mounted under the node
// directory so WorkDir can be removed.
func (rn *realNode) stop(timeout func(*process) error) error {
	var errs []error
	if rn.kubelet != nil {
		errs = append(errs, timeout(rn.kubelet))
	}
	if rn.container != nil {
		ctx := context.Background()
		// Tasks exiting while the kubelet stopped race the deletes ("cannot
		// delete a deleted process: not found", "ttrpc: closed" from a shim
		// that just went): delete every task, then report only those still
		// listed after a second pass.
		for pass := 1; pass <= 2; pass++ {
			out, err := rn.ctr(ctx, "tasks", "ls", "-q")
			if err != nil {
				errs = append(errs, fmt.Errorf("controlplane: real node: list containers: %w: %s", err, strings.TrimSpace(string(out))))
				break
			}
			for _, id := range strings.Fields(string(out)) {
				if out, err := rn.ctr(ctx, "tasks", "delete", "--force", id); err != nil && pass == 2 {
					errs = append(errs, fmt.Errorf("controlplane: real node: remove container %s: %w: %s", id, err, strings.TrimSpace(string(out))))
				}
			}
		}
		errs = append(errs, timeout(rn.container))
	}
	errs = append(errs, unmountUnder(rn.dir))
	return errors.Join(errs...)
}

// writeFiles writes each path's content.
func writeFiles(files map[string]string) error {
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return fmt.Errorf("controlplane: real node: %w", err)
		}
	}
	return nil
}
