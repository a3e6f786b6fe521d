package controller

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

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

// Each write is logged with the resourceVersion it returned and when it
// was sent, so a replica's writes can be told apart from another's (the
// real backend's C10 check reads these lines): a status write that changes
// a phase at info, the others at V(1).
func TestWritesAreLoggedWithTheirResourceVersion(t *testing.T) {
	w := newWorld(t, deployment("job-worker", "worker", "registry.example.com/job-worker:v1.0.0"),
		deployment("job-api", "api", "registry.example.com/job-api:v1.0.0"), upgrade("upgrade-v2"))
	w.rollOut("job-worker", "")
	w.rollOut("job-api", "")
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 0})
	ctx := log.IntoContext(context.Background(), logger)
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "upgrade-v2"}}
	_, err := w.r.Reconcile(ctx, req)
	require.NoError(t, err)
	_, err = w.r.Reconcile(ctx, req)
	require.NoError(t, err)

	rv := w.beta("upgrade-v2").ResourceVersion
	worker, _ := w.get("job-worker")
	var status, image bool
	for _, l := range lines {
		if strings.Contains(l, `"msg"="status written"`) && strings.Contains(l, `"sent"=`) && strings.Contains(l, `"resourceVersion"=`) &&
			strings.Contains(l, `"components"="worker=`) {
			status = true
		}
		if strings.Contains(l, `"msg"="image written"`) && strings.Contains(l, `"workloadResourceVersion"="`+worker.ResourceVersion+`"`) && strings.Contains(l, `"sent"=`) {
			image = true
		}
	}
	assert.True(t, status, "a phase change's status write is logged at info: %q", lines)
	assert.True(t, image, "the worker's image write is logged with the resourceVersion it returned (%s): %q", worker.ResourceVersion, lines)
	assert.NotEmpty(t, rv)
}
