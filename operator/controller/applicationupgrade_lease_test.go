package controller

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

// A pass whose process cannot vouch for its Lease (LeaseHeld errs: paused
// past the renew deadline) writes neither an image nor its status, and
// retries after LeaseRetry; once the Lease is renewed the same pass writes.
func TestAPassWithoutAFreshLeaseWritesNothing(t *testing.T) {
	w := newWorld(t, deployment("job-worker", "worker", "registry.example.com/job-worker:v1.0.0"),
		deployment("job-api", "api", "registry.example.com/job-api:v1.0.0"), upgrade("upgrade-v2"))
	w.rollOut("job-worker", "")
	w.rollOut("job-api", "")
	require.Equal(t, v1.PhasePending, w.reconcile("upgrade-v2"))
	before := w.beta("upgrade-v2").ResourceVersion

	stale := errors.New("last renewed 30s ago")
	w.r.LeaseHeld = func() error { return stale }
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "upgrade-v2"}}
	res, err := w.r.Reconcile(context.Background(), req)
	require.NoError(t, err, "not a failure: the elector renews or the process exits")
	assert.Equal(t, LeaseRetry, res.RequeueAfter)
	worker, _ := w.get("job-worker")
	assert.Equal(t, "registry.example.com/job-worker:v1.0.0", worker.Spec.Template.Spec.Containers[0].Image, "no image write")
	assert.Equal(t, before, w.beta("upgrade-v2").ResourceVersion, "no status patch")

	w.r.LeaseHeld = func() error { return nil }
	_, err = w.r.Reconcile(context.Background(), req)
	require.NoError(t, err)
	assert.NotEqual(t, before, w.beta("upgrade-v2").ResourceVersion, "renewed: the pass goes on")
}
