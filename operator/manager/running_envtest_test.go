//go:build envtest

package manager

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The Running specs run the operator's manager against a real
// kube-apiserver and etcd (make controlplane; KUBEBUILDER_ASSETS or ./bin).
// Run with `make test-envtest`.

func startEnvtest(t *testing.T) *rest.Config {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin")
	}
	env := &envtest.Environment{BinaryAssetsDirectory: assets, ErrorIfCRDPathMissing: true,
		CRDDirectoryPaths: []string{filepath.Join(root, "deploy", "crd", "bases")}}
	cfg, err := env.Start()
	require.NoError(t, err, "start envtest (etcd and kube-apiserver in %s)", assets)
	t.Cleanup(func() { _ = env.Stop() })
	return cfg
}

// TestRunningStartWaitStop: Start runs the manager; it syncs its caches
// and takes the Lease; Stop waits for it to exit, and it released the
// Lease (ReleaseOnCancel). A manager that cannot start (its metrics
// address is taken) is reported by a wait, with its error, at once.
func TestRunningStartWaitStop(t *testing.T) {
	cfg := startEnvtest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	lease := types.NamespacedName{Namespace: "default", Name: "running-test"}
	run, err := Start(ctx, cfg, Options{MetricsAddr: "0", ProbeAddr: "0", SkipNameValidation: true,
		LeaderElect: true, LeaderElectionNamespace: lease.Namespace, LeaderElectionID: lease.Name})
	require.NoError(t, err)
	require.NoError(t, run.WaitForCacheSync(ctx))
	require.NoError(t, run.WaitElected(ctx))
	var l coordinationv1.Lease
	require.NoError(t, run.GetAPIReader().Get(ctx, lease, &l))
	assert.NotEmpty(t, ptr.Deref(l.Spec.HolderIdentity, ""), "the elected manager holds the Lease")
	assert.NoError(t, run.Err(), "no exit error while running")

	require.NoError(t, run.Stop(ctx))
	select {
	case <-run.Done():
	default:
		t.Fatal("Stop returned before the manager exited")
	}
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	require.NoError(t, c.Get(ctx, lease, &l))
	assert.Empty(t, ptr.Deref(l.Spec.HolderIdentity, ""), "Stop released the Lease")

	// A manager whose caches never sync (its identity may list nothing):
	// a wait ends with its context, Stop still waits for the exit.
	nobody := rest.CopyConfig(cfg)
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "nobody"}
	blind, err := Start(ctx, nobody, Options{MetricsAddr: "0", ProbeAddr: "0", SkipNameValidation: true})
	require.NoError(t, err)
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	defer cancelShort()
	assert.ErrorContains(t, blind.WaitForCacheSync(short), "not ready (its caches synced): context deadline exceeded")
	require.NoError(t, blind.Stop(ctx))
	assert.ErrorContains(t, blind.WaitForCacheSync(ctx), "exited before its caches synced", "a stopped manager is not waited for")

	// A manager that exits on its own (its metrics address is taken) is
	// reported by a wait, with its error, before the wait's context ends.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	broken, err := Start(ctx, nobody, Options{MetricsAddr: taken.Addr().String(), ProbeAddr: "0", SkipNameValidation: true})
	require.NoError(t, err)
	err = broken.WaitForCacheSync(ctx)
	require.ErrorContains(t, err, "exited before its caches synced")
	assert.ErrorContains(t, err, "address already in use")
	assert.Equal(t, broken.Err(), broken.Wait())
	assert.ErrorContains(t, broken.WaitElected(ctx), "exited before it was elected")
}
