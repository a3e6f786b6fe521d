package cluster

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
)

// TestSimGitopsRevertFlagsCompletedWhileReverted: on the features'
// simulator backend the gitops-revert actor (make simulate's code) applies
// Git's previous image with force under kustomize-controller, and an
// upgrade that says Completed for its generation while the Deployment
// runs that image is a violation the scenario fails on; one that does
// not claim Completed is none.
func TestSimGitopsRevertFlagsCompletedWhileReverted(t *testing.T) {
	for _, completed := range []bool{false, true} {
		s, err := NewSim(t.Context(), Options{Scenario: "gitops", Seed: 1})
		require.NoError(t, err)
		ctx := t.Context()
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace(), Name: "w"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "w"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "r/w:v1.0.0"}}}}}}
		require.NoError(t, s.Client().Create(ctx, d))
		u := &upgradesv1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace(), Name: "u"}, Spec: upgradesv1beta1.ApplicationUpgradeSpec{
			Components: []upgradesv1beta1.Component{{Name: "worker", DeploymentRef: upgradesv1beta1.DeploymentReference{Name: "w"}, Image: "r/w:v2.0.0"}}}}
		require.NoError(t, s.Client().Create(ctx, u))
		if completed {
			u.Status.Phase, u.Status.ObservedGeneration = upgradesv1beta1.PhaseCompleted, u.Generation
			require.NoError(t, s.Client().Status().Update(ctx, u))
		}
		fs, err := faults.ParseFaults("gitops-revert@0s:every=1s:for=3s")
		require.NoError(t, err)
		require.NoError(t, s.Inject(ctx, fs[0]))

		fired := s.Fired()
		require.NotEmpty(t, fired)
		assert.Contains(t, fired[0].Note, "re-applies deployment "+s.Namespace()+"/w with image r/w:v1.0.0 every 1s for 3s (component worker)")
		require.NoError(t, s.Client().Get(ctx, client.ObjectKeyFromObject(d), d))
		assert.Equal(t, "r/w:v1.0.0", d.Spec.Template.Spec.Containers[0].Image)
		applied := false
		for _, m := range d.ManagedFields {
			applied = applied || m.Manager == faults.GitopsManager && m.Operation == metav1.ManagedFieldsOperationApply
		}
		assert.True(t, applied, "a server-side apply by %s: %v", faults.GitopsManager, d.ManagedFields)
		if !completed {
			assert.Empty(t, s.Violations())
			continue
		}
		require.NotEmpty(t, s.Violations())
		assert.Contains(t, s.Violations()[0], "Completed at t=0.000s while deployment "+s.Namespace()+"/w runs r/w:v1.0.0, not r/w:v2.0.0")
	}
}

func TestRealRefusesWhatItCannotInjectInOneLine(t *testing.T) {
	r := &Real{}
	for _, spec := range []string{"stale@0s", "drop@5s:for=10s:kind=pods"} {
		fs, err := faults.ParseFaults(spec)
		require.NoError(t, err)
		err = r.injectOwn(t.Context(), fs[0])
		require.ErrorIs(t, err, ErrUnsupported)
		assert.Equal(t, "fault "+fs[0].String()+" cannot run on the real backend: "+StaleDropRealRefusal+": "+ErrUnsupported.Error(), err.Error(),
			"the exact line")
	}
	for spec, want := range map[string]string{
		"kcm-lag@0s": "cannot be delayed",
	} {
		fs, err := faults.ParseFaults(spec)
		require.NoError(t, err)
		err = r.injectOwn(t.Context(), fs[0])
		assert.True(t, errors.Is(err, ErrUnsupported) && strings.Contains(err.Error(), want) && !strings.Contains(err.Error(), "\n"),
			"%s: %v, want one line containing %q", spec, err, want)
	}
}

// TestRealRuntimeStopsItsTimers (run with -race): the real backend's
// actors fire on timers of their own, one callback at a time (fifty
// webhook-down windows opened at once write the same field: the race
// detector fails an unsynchronised one), and stop cancels every pending
// timer (a scale an hour away never runs), waits for the running ones
// and refuses new ones.
func TestRealRuntimeStopsItsTimers(t *testing.T) {
	rt := newRealRuntime(&rest.Config{Host: "http://127.0.0.1:1"}, "ns")
	b := faults.NewBoundary(1, func() time.Duration { return 0 }, nil)
	ctx, cancel := context.WithCancel(t.Context())
	l := faults.NewLiveActors(ctx, rt, "ns", b, func() time.Duration { return 0 }, nil)
	fs, err := faults.ParseFaults("webhook-down@1ms:for=1h,scale@1h")
	require.NoError(t, err)
	for range 50 {
		require.NoError(t, l.Inject(fs[0]))
	}
	require.NoError(t, l.Inject(fs[1]))
	deadline := time.Now().Add(10 * time.Second)
	for len(b.Fired()) < 50 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	require.Len(t, b.Fired(), 50, "every webhook-down fired once")
	cancel()
	stopped := make(chan struct{})
	go func() { rt.stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("stop did not return: a pending timer was not cancelled")
	}
	var late atomic.Int32
	rt.After(time.Nanosecond, "after stop", func() { late.Add(1) })
	rt.stop() // idempotent, and waits for nothing now
	assert.Zero(t, late.Load(), "a callback ran after stop")
	assert.Len(t, b.Fired(), 50, "the scale an hour away never fired")
}
