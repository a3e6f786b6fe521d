//go:build envtest

package manager

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// Lease (ReleaseOnCancel).
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
}

// failing is a runnable (not leader-elected) that fails at once.
type failing struct{}

func (failing) Start(context.Context) error { return errors.New("boom (test)") }
func (failing) NeedLeaderElection() bool    { return false }

// TestRunningReportsAManagerThatExits: a manager that cannot lead (another
// holds its Lease for an hour) is not elected before a wait's context
// ends; when it exits (a runnable fails) the wait in progress says so with
// the manager's error, and so does every later wait.
func TestRunningReportsAManagerThatExits(t *testing.T) {
	cfg := startEnvtest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	now := metav1.NewMicroTime(time.Now())
	held := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "held-elsewhere"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("another-replica"), LeaseDurationSeconds: ptr.To[int32](3600), AcquireTime: &now, RenewTime: &now}}
	require.NoError(t, c.Create(ctx, held))
	run, err := Start(ctx, cfg, Options{MetricsAddr: "0", ProbeAddr: "0", SkipNameValidation: true,
		LeaderElect: true, LeaderElectionNamespace: held.Namespace, LeaderElectionID: held.Name})
	require.NoError(t, err)
	require.NoError(t, run.WaitForCacheSync(ctx))
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	defer cancelShort()
	assert.ErrorContains(t, run.WaitElected(short), "not ready (it was elected): context deadline exceeded")

	waited := make(chan error, 1)
	go func() { waited <- run.WaitElected(ctx) }()
	require.NoError(t, run.Add(failing{}))
	err = <-waited
	require.ErrorContains(t, err, "exited before it was elected")
	assert.ErrorContains(t, err, "boom (test)")
	assert.Equal(t, run.Err(), run.Wait())
	assert.ErrorContains(t, run.WaitForCacheSync(ctx), "exited before its caches synced: boom (test)")
	assert.ErrorContains(t, run.Stop(ctx), "boom (test)", "Stop of an exited manager returns its error")
}
