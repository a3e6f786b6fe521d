//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/e2e"
)

// cp is the one local control plane every case shares (one namespace each).
var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	var err error
	cp, err = controlplane.Start(context.Background(), controlplane.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	fmt.Printf("e2e: local control plane ready in %s (kubeconfig %s)\n", cp.StartupDuration.Round(1e6), cp.Kubeconfig)
	code := m.Run()
	if code != 0 {
		cp.KeepLogs() // Stop prints where the control plane's logs are
	}
	if err := cp.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stop control plane:", err)
	}
	os.Exit(code)
}

// TestE2E runs the real manager on the local control plane (real
// kube-apiserver, Deployment and ReplicaSet controllers, scheduler; kwok
// kubelets): C01–C07, the mutation check and operator restarts.
func TestE2E(t *testing.T) {
	runSuite(t, e2e.Env{Name: "local", RESTConfig: cp.RESTConfig, Kubeconfig: cp.Kubeconfig, Images: e2e.KwokImages})
}
