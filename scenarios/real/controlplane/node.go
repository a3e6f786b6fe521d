package controlplane

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// notReadyTaint is added to every new Node by the API server's
// TaintNodesByCondition admission plugin. The node-lifecycle controller
// would remove it once the Node is Ready; it does not run here, so
// readyNode removes it.
const notReadyTaint = "node.kubernetes.io/not-ready"

// readyNode creates the kwok Node, waits until kwok's node-initialize Stage
// marks it Ready, then removes the not-ready taint so pods can be scheduled.
func (cp *ControlPlane) readyNode(ctx context.Context, client kubernetes.Interface) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: cp.NodeName,
			Labels: map[string]string{
				"kubernetes.io/hostname": cp.NodeName,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
		},
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("controlplane: create node %s: %w", cp.NodeName, err)
	}
	if err := cp.waitNodeReady(ctx, client, cp.NodeName, "set by kwok"); err != nil {
		return err
	}
	return removeNotReadyTaint(ctx, client, cp.NodeName)
}

// waitNodeReady waits until Node name is Ready; by says who sets it.
func (cp *ControlPlane) waitNodeReady(ctx context.Context, client kubernetes.Interface, name, by string) error {
	return cp.poll(ctx, "node "+name+" Ready ("+by+")", func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return nodeReady(n), nil
	})
}

// removeNotReadyTaint removes the node.kubernetes.io/not-ready taint from
// Node name.
func removeNotReadyTaint(ctx context.Context, client kubernetes.Interface, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		kept := n.Spec.Taints[:0]
		for _, t := range n.Spec.Taints {
			if t.Key != notReadyTaint {
				kept = append(kept, t)
			}
		}
		n.Spec.Taints = kept
		if _, err := client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("controlplane: remove taint %s from node %s: %w", notReadyTaint, name, err)
		}
		return nil
	})
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
