//go:build e2e

package install

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/manager"
)

// TestChartTwoReplicasSurviveOneStopped: the chart's default of two
// replicas (leader election on, both serving admission and conversion
// behind the webhook Service). The leader is stopped while a v1alpha1
// upgrade's worker rolls out: v1alpha1 reads (conversion) and admission
// keep being answered by the other replica, which takes the Lease and
// completes the upgrade.
func TestChartTwoReplicasSurviveOneStopped(t *testing.T) {
	env := newTenantEnv(t)
	ctx, admin := env.ctx, env.admin
	replicas := map[string]*process{}
	for _, name := range []string{"replica-a", "replica-b"} {
		replicas[name] = startProcess(t, name, env.bin, env.replicaArgs(t), []string{"KUBECONFIG="})
	}

	worker := tenantDeployment("tenant-a", "worker")
	worker.Spec.Replicas = ptr.To[int32](3)
	worker.Spec.Template.Annotations["pod-ready.stage.kwok.x-k8s.io/delay"] = "2s"
	require.NoError(t, admin.Create(ctx, worker))
	require.NoError(t, admin.Create(ctx, tenantDeployment("tenant-a", "api")))
	up := &upgradesv1alpha1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "ha"},
		Spec: upgradesv1alpha1.ApplicationUpgradeSpec{
			Worker: upgradesv1alpha1.ComponentSpec{DeploymentRef: upgradesv1alpha1.DeploymentReference{Name: "worker"}, Image: "registry.example.com/worker:v2"},
			API:    upgradesv1alpha1.ComponentSpec{DeploymentRef: upgradesv1alpha1.DeploymentReference{Name: "api"}, Image: "registry.example.com/api:v2"}}}
	require.NoError(t, createWhenServing(ctx, admin, up), "a v1alpha1 upgrade through the replicas' webhooks")
	waitComponent(t, ctx, admin, "ha", "worker", v1beta1.ComponentRollingOut)

	leader := leaseHolder(t, ctx, admin) // hostname_uuid: the log tells which replica
	stopped := leaderProcess(t, replicas, leader)
	t.Logf("the leader %s (%s) is stopped mid-rollout", stopped, leader)
	stopProcess(t, replicas[stopped])

	// Served by the other replica: v1alpha1 reads (conversion) and admission.
	for i := 0; i < 5; i++ {
		var a upgradesv1alpha1.ApplicationUpgrade
		require.NoError(t, admin.Get(ctx, client.ObjectKey{Namespace: "tenant-a", Name: "ha"}, &a), "v1alpha1 read %d", i)
		assert.Equal(t, "registry.example.com/worker:v2", a.Spec.Worker.Image)
	}
	bad := betaUpgrade("tenant-a", "bad", v1beta1.Component{Name: "a", DeploymentRef: v1beta1.DeploymentReference{Name: "app"}, Image: "app:v2\x1b[2J"})
	err := admin.Create(ctx, bad, client.DryRunAll)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "denied the request", "the admission webhook answered")

	u := waitPhase(t, ctx, admin, "tenant-a", "ha", v1beta1.PhaseCompleted)
	assert.Equal(t, "registry.example.com/api:v2", image(t, ctx, admin, "tenant-a", "api"))
	after := leaseHolder(t, ctx, admin)
	assert.NotEqual(t, leader, after, "the other replica took the Lease")
	t.Logf("completed by %s after the leader stopped: %s", after, u.Status.Message)
}

// leaseHolder waits for the manager's leader election Lease to have a
// holder and returns it.
func leaseHolder(t *testing.T, ctx context.Context, c client.Client) string {
	t.Helper()
	var holder string
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var l coordinationv1.Lease
		if err := c.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: manager.DefaultLeaderElectionID}, &l); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		holder = ptr.Deref(l.Spec.HolderIdentity, "")
		return holder != "", nil
	}))
	return holder
}

// leaderProcess names the replica whose log says it acquired the Lease
// (client-go's leaderelection logs "Successfully acquired lease"; the
// holder identity, hostname_uuid, is not logged); exactly one may say so.
func leaderProcess(t *testing.T, replicas map[string]*process, holder string) string {
	t.Helper()
	var leaders []string
	for name, p := range replicas {
		data, err := os.ReadFile(p.log)
		require.NoError(t, err)
		if strings.Contains(string(data), "Successfully acquired lease") {
			leaders = append(leaders, name)
		}
	}
	require.Len(t, leaders, 1, "one replica leads as %s", holder)
	return leaders[0]
}
