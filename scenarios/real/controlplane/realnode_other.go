//go:build !linux

package controlplane

import (
	"context"
	"fmt"
	"runtime"

	"k8s.io/client-go/kubernetes"
)

type realNode struct{}

func (*realNode) stop(func(*process) error) error { return nil }

func checkRealNode(string, string) error {
	return fmt.Errorf("controlplane: %w: it needs Linux (this is %s)", ErrRealNodeUnavailable, runtime.GOOS)
}

func (cp *ControlPlane) startRealNode(context.Context, kubernetes.Interface, *pki, string) error {
	return checkRealNode("", "")
}
