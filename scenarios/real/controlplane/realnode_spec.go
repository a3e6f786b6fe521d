package controlplane

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
)

// The real node (Options.RealNode): a kubelet built from the tools module
// hack/tools/kubelet (make node) beside the kwok nodes, with a containerd of
// its own (Debian's containerd and runc) and a loopback-only CNI network
// (Debian's containernetworking-plugins). Everything it writes lives under
// WorkDir/node; all traffic stays on 127.0.0.1.

const (
	// RealNodeName is the real node's Node name.
	RealNodeName = "real-node-0"
	// RealNodeTaintKey taints the real node NoSchedule, so only pods that
	// tolerate it (RealNodePodSpec) run real containers; every other pod
	// keeps going to the kwok node, as without the real node.
	RealNodeTaintKey = "upgrade-operator.lunadas.dev/real-node"
	// RealNodeLabel is set to "true" on the real node.
	RealNodeLabel = "upgrade-operator.lunadas.dev/real-node"

	kubeletBin = "kubelet"
	// cniBinDir is where Debian's containernetworking-plugins installs.
	cniBinDir = "/usr/lib/cni"
	// kwokNodeSelector restricts kwok to the Nodes it creates (annotation
	// kwok.x-k8s.io/node=fake, set by readyNode) when a real node runs.
	kwokNodeSelector = "kwok.x-k8s.io/node=fake"
)

// ErrRealNodeUnavailable wraps the reason this machine cannot run the real
// node (containerd does not start); tests skip on it with that one line.
var ErrRealNodeUnavailable = errors.New("the real node cannot run on this machine")

// RealNodePodSpec makes spec run on the real node: a toleration of its
// taint, a node selector for its label, imagePullPolicy Never for every
// container (the images come from the archive `make node` builds), and
// hostNetwork. hostNetwork because containerd 1.6's CRI plugin fails a
// pod sandbox whose CNI result has no address on eth0
// (containerd pkg/cri/server/sandbox_run.go, setupPodNetwork: "failed to
// find network info for sandbox"), and the loopback plugin reports only
// lo (containernetworking/plugins plugins/main/loopback, cmdAdd); the
// loopback-only network still makes the runtime report NetworkReady, which
// the kubelet needs for a Ready node. The demo containers listen on
// nothing; every probe is an exec probe.
func RealNodePodSpec(spec *corev1.PodSpec) {
	spec.HostNetwork = true
	if spec.NodeSelector == nil {
		spec.NodeSelector = map[string]string{}
	}
	spec.NodeSelector[RealNodeLabel] = "true"
	spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: RealNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	for i := range spec.InitContainers {
		spec.InitContainers[i].ImagePullPolicy = corev1.PullNever
	}
	for i := range spec.Containers {
		spec.Containers[i].ImagePullPolicy = corev1.PullNever
	}
}
