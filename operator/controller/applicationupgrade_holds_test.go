package controller

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

// A rejected image write is retried after the workqueue's back-off (5, 10,
// 20 ms …) even when watch events wake the reconciler in between: passes
// during the back-off make no write. A new generation of the upgrade and a
// restarted process go ahead at once.
func TestAFailedWriteWaitsItsBackOffWhateverWakesIt(t *testing.T) {
	w := newWorld(t, deployment("job-worker", "worker", "registry.example.com/job-worker:v1.0.0"),
		deployment("job-api", "api", "registry.example.com/job-api:v1.0.0"), upgrade("upgrade-v2"))
	w.rollOut("job-worker", "")
	w.rollOut("job-api", "")
	clk := w.r.Clock.(*clocktesting.FakeClock)
	attempts, reject := 0, 4
	w.r.Client = interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			attempts++
			if attempts <= reject {
				return apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "job-worker", nil)
			}
			return applyAsStrategicMerge(ctx, c, obj, opts...)
		},
	})
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "upgrade-v2"}}
	pass := func() time.Duration {
		t.Helper()
		res, err := w.r.Reconcile(context.Background(), req)
		require.NoError(t, err)
		return res.RequeueAfter
	}
	assert.Equal(t, v1.PhasePending, w.reconcile("upgrade-v2"))
	assert.Equal(t, v1.PhaseUpgradingWorkers, w.reconcile("upgrade-v2"))

	assert.Equal(t, 5*time.Millisecond, pass(), "the first rejection backs off 5 ms")
	assert.Equal(t, 1, attempts)
	for range 3 { // watch events during the back-off
		assert.Equal(t, 5*time.Millisecond, pass())
	}
	assert.Equal(t, 1, attempts, "no write during the back-off")
	clk.Step(4 * time.Millisecond)
	assert.Equal(t, time.Millisecond, pass(), "a pass woken 4 ms in waits the rest")
	assert.Equal(t, 1, attempts)

	clk.Step(time.Millisecond)
	assert.Equal(t, 10*time.Millisecond, pass(), "the second rejection backs off 10 ms")
	assert.Equal(t, 2, attempts)
	clk.Step(9 * time.Millisecond)
	pass()
	assert.Equal(t, 2, attempts)

	// A restarted process keeps no back-off (nor does a new workqueue).
	w.r.ForgetProcessState()
	assert.Equal(t, 5*time.Millisecond, pass(), "after a restart the count starts again")
	assert.Equal(t, 3, attempts)

	// A new generation is a new decision, taken at once.
	u := w.beta("upgrade-v2")
	u.Generation++
	require.NoError(t, w.c.Update(context.Background(), u))
	for i := 0; i < 3 && attempts == 3; i++ { // the new generation's first passes, at the same instant
		pass()
	}
	assert.Equal(t, 4, attempts, "a new generation writes at once")

	clk.Step(5 * time.Millisecond)
	assert.Zero(t, pass(), "the fifth attempt succeeds: no hold")
	assert.Equal(t, 5, attempts)
	d, _ := w.get("job-worker")
	assert.Equal(t, "registry.example.com/job-worker:v2.0.0", d.Spec.Template.Spec.Containers[0].Image)
	_, held := w.r.state.holds.m[req.NamespacedName]
	assert.False(t, held, "success drops the hold")
}

// An upgrade deleted during a pass: its status patch's 404 ends the pass
// quietly (no error for controller-runtime to log as "Reconciler error"
// and retry); a 404 that does not name the upgrade (a CRD served without
// the status subresource) is still an error.
func TestAnUpgradeDeletedDuringAPassEndsItQuietly(t *testing.T) {
	w := newWorld(t, deployment("job-worker", "worker", "registry.example.com/job-worker:v1.0.0"),
		deployment("job-api", "api", "registry.example.com/job-api:v1.0.0"), upgrade("upgrade-v2"))
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "upgrade-v2"}}
	gr := schema.GroupResource{Group: "upgrades.lunadas.dev", Resource: "applicationupgrades"}
	var answer error
	w.r.Client = interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return answer
		},
	})
	answer = apierrors.NewNotFound(gr, "upgrade-v2")
	res, err := w.r.Reconcile(context.Background(), req)
	require.NoError(t, err)
	assert.True(t, res.IsZero(), "nothing to retry: %+v", res)

	answer = &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource"}}
	_, err = w.r.Reconcile(context.Background(), req)
	require.Error(t, err, "a 404 that does not name the upgrade is a fault")
	assert.Contains(t, err.Error(), "patch status of applicationupgrade")
}
