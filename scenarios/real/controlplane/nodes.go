package controlplane

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NodeNames are the names of n kwok nodes, "kwok-node-0" ...
// "kwok-node-<n-1>" (simulator.NodeNames gives the same names, so a
// scenario's nodes agree on both backends). n < 1 means 1.
func NodeNames(n int) []string {
	names := make([]string, max(n, 1))
	for i := range names {
		names[i] = fmt.Sprintf("kwok-node-%d", i)
	}
	return names
}

// AddNodes creates further kwok Nodes (kwok manages every Node unless a
// real node runs) labelled as the first, waits until kwok marks each Ready
// and removes its not-ready taint: a DaemonSet then runs a pod on each.
// Nodes that exist already are made ready as well.
func (cp *ControlPlane) AddNodes(ctx context.Context, names ...string) error {
	client, err := kubernetes.NewForConfig(cp.RESTConfig)
	if err != nil {
		return fmt.Errorf("controlplane: client: %w", err)
	}
	for _, name := range names {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels:      map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"},
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}}}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("controlplane: create node %s: %w", name, err)
		}
	}
	for _, name := range names {
		if err := cp.waitNodeReady(ctx, client, name, "set by kwok"); err != nil {
			return err
		}
		if err := removeNotReadyTaint(ctx, client, name); err != nil {
			return err
		}
	}
	return nil
}
