package controller

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// The passes of the handoff read a cache that has not delivered the
// reconciler's own previous status patches yet (routine under load). They
// decide from those patches' results instead: the pass woken by the last
// old worker pod's deletion records the API Upgrading and the next pass, in
// the same Reconcile, writes the API image; both status patches go through,
// with no 409 Conflict and no back-off. Without the kept patch (a restarted
// process) the first pass is refused by the optimistic lock and backs off,
// as before.
func TestAPassReadsItsOwnStatusPatchBeforeTheCacheDoes(t *testing.T) {
	for _, restarted := range []bool{false, true} {
		w := newWorld(t, deployment("job-worker", "worker", "registry.example.com/job-worker:v1.0.0"),
			deployment("job-api", "api", "registry.example.com/job-api:v1.0.0"), upgrade("upgrade-v2"))
		w.rollOut("job-worker", "")
		w.rollOut("job-api", "")
		oldWorkerPod := w.podsOf("job-worker")[0].Name
		require.Equal(t, v1.PhasePending, w.reconcile("upgrade-v2"))
		require.Equal(t, v1.PhaseUpgradingWorkers, w.reconcile("upgrade-v2"))
		require.Equal(t, v1.PhaseWaitingForWorkers, w.reconcile("upgrade-v2"))
		w.rollOut("job-worker", oldWorkerPod)

		// The cache stops at the upgrade as it is now; the next pass's
		// status patch ("old pod still terminating") is not delivered.
		var stale *v1beta1.ApplicationUpgrade
		conflicts := 0
		var apiPhases []v1beta1.ComponentPhase // the API component's phase after each status patch
		base := w.c.(client.WithWatch)
		w.r.Client = interceptor.NewClient(base, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if u, ok := obj.(*v1beta1.ApplicationUpgrade); ok && stale != nil {
					stale.DeepCopyInto(u)
					return nil
				}
				return c.Get(ctx, key, obj, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
				if apierrors.IsConflict(err) {
					conflicts++
				}
				if u, ok := obj.(*v1beta1.ApplicationUpgrade); ok && err == nil {
					for _, c := range u.Status.Components {
						if c.Name == "api" {
							apiPhases = append(apiPhases, c.Phase)
						}
					}
				}
				return err
			},
		})
		stale = w.beta("upgrade-v2")
		w.pass("upgrade-v2")
		require.Contains(t, w.beta("upgrade-v2").Status.Message, "still exists (terminating)", "restarted=%v", restarted)
		require.NotEqual(t, stale.ResourceVersion, w.beta("upgrade-v2").ResourceVersion, "the pass patched status")
		if restarted {
			w.r.ForgetProcessState()
		}

		w.finishTermination(oldWorkerPod)
		apiPhases = nil
		req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "upgrade-v2"}}
		res, err := w.r.Reconcile(context.Background(), req)
		require.NoError(t, err)
		if restarted {
			assert.Equal(t, 1, conflicts, "with no kept patch the stale read is refused")
			assert.Greater(t, res.RequeueAfter, AgainAt, "and backs off")
			assert.Equal(t, v1.PhaseWaitingForWorkers, w.alpha("upgrade-v2").Status.Phase)
			continue
		}
		assert.Zero(t, conflicts, "both passes read their own patches: no 409")
		assert.Zero(t, res.RequeueAfter, "the API was Upgrading after the first pass; the second, in the same Reconcile, wrote it")
		api, _ := w.get("job-api")
		assert.Equal(t, "registry.example.com/job-api:v2.0.0", api.Spec.Template.Spec.Containers[0].Image, "the handoff write waits neither for the cache nor for the workqueue")
		assert.Equal(t, v1.PhaseWaitingForAPI, w.alpha("upgrade-v2").Status.Phase)
		assert.Equal(t, []v1beta1.ComponentPhase{v1beta1.ComponentUpgrading, v1beta1.ComponentRollingOut}, apiPhases,
			"the first pass recorded the API Upgrading, the second its write")
	}
}
