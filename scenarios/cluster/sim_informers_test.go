package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/scenarios/faults"
)

// informerRig is a features' simulator with one Deployment, read by the
// store and by operator replica 0's client (as its reconciler reads).
type informerRig struct {
	t   *testing.T
	ctx context.Context
	s   *Sim
	key client.ObjectKey
}

func newInformerRig(t *testing.T) *informerRig {
	ctx := t.Context()
	s, err := NewSim(ctx, Options{Scenario: "informers", Seed: 1})
	require.NoError(t, err)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace(), Name: "w", Labels: map[string]string{"v": "1"}},
		Spec: appsv1.DeploymentSpec{Replicas: new(int32), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "w"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "w"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "r/w:v1.0.0"}}}}}}
	require.NoError(t, s.Client().Create(ctx, d))
	r := &informerRig{t: t, ctx: ctx, s: s, key: client.ObjectKeyFromObject(d)}
	r.advance(time.Second)
	return r
}

func (r *informerRig) inject(spec string) {
	fs, err := faults.ParseFaults(spec)
	require.NoError(r.t, err)
	require.NoError(r.t, r.s.Inject(r.ctx, fs[0]))
}

func (r *informerRig) advance(d time.Duration) {
	_, err := r.s.env.Sim.RunUntil(r.ctx, r.s.env.Sim.Now().Add(d))
	require.NoError(r.t, err)
}

func (r *informerRig) label(v string) {
	var d appsv1.Deployment
	require.NoError(r.t, r.s.Client().Get(r.ctx, r.key, &d))
	d.Labels["v"] = v
	require.NoError(r.t, r.s.Client().Update(r.ctx, &d))
}

// seen is the label replica 0's reconciler reads now.
func (r *informerRig) seen() string {
	var d appsv1.Deployment
	require.NoError(r.t, cacheSwitch{Client: r.s.env.Sim.Client(), s: r.s, replica: 0}.Get(r.ctx, r.key, &d))
	return d.Labels["v"]
}

// TestSimStaleLagsTheOperatorsReads: before a cache fault the features'
// operator reads the store; stale makes it read through make simulate's
// informer model, its Deployment informer lag behind by the fault's lag.
func TestSimStaleLagsTheOperatorsReads(t *testing.T) {
	r := newInformerRig(t)
	r.label("2")
	assert.Equal(t, "2", r.seen(), "no cache fault yet: the store")
	r.inject("stale@0s:for=1m:lag=5s:kind=deployments")
	require.Len(t, r.s.caches, 1, "replica 0 reads through its informers")
	assert.Equal(t, "2", r.seen(), "the informers listed the store when the fault came")
	r.label("3")
	r.advance(4 * time.Second)
	assert.Equal(t, "2", r.seen(), "4s after the write, behind by 5s")
	r.advance(2 * time.Second)
	assert.Equal(t, "3", r.seen(), "caught up after the lag")
	fired := r.s.Fired()
	require.Len(t, fired, 1)
	assert.Equal(t, "the operator's deployments informer runs 5s behind for 1m0s", fired[0].Note)
}

// TestSimDropLosesEventsUntilRelistOrColdStart: drop freezes the
// operator's copy; a cold start (crash) lists afresh although the drop
// goes on, and the window's end relists.
func TestSimDropLosesEventsUntilRelistOrColdStart(t *testing.T) {
	r := newInformerRig(t)
	r.inject("drop@0s:for=20s:kind=deployments")
	r.label("2")
	r.advance(5 * time.Second)
	assert.Equal(t, "1", r.seen(), "the event was lost")
	r.inject("crash@0s:down=2s")
	r.advance(3 * time.Second)
	require.True(t, r.s.replicas[0].Alive)
	assert.Equal(t, "2", r.seen(), "the restarted replica listed the store")
	r.label("3")
	r.advance(5 * time.Second)
	assert.Equal(t, "2", r.seen(), "the drop goes on after the restart")
	r.advance(10 * time.Second)
	assert.Equal(t, "3", r.seen(), "relisted at the window's end")
}

// TestSimStandbyGetsItsInformers: a standby added after the first cache
// fault reads through informers of its own, as replica 0 does, and the
// fault's window ends on both.
func TestSimStandbyGetsItsInformers(t *testing.T) {
	r := newInformerRig(t)
	r.inject("stale@0s:for=10s:lag=5s:kind=deployments")
	require.NoError(t, r.s.AddStandbyReplica(r.ctx))
	require.Len(t, r.s.caches, 2)
	r.advance(11 * time.Second)
	r.label("2")
	r.advance(time.Millisecond)
	assert.Equal(t, "2", r.seen(), "the window is over: no lag")
}
