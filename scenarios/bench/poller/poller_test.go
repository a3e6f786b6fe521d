package poller

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/lunadas/upgrade-operator/operator/manager"
)

func dep(gen, observed int64, spec, replicas, updated, available int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", Generation: gen},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(spec)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: observed, Replicas: replicas,
			UpdatedReplicas: updated, AvailableReplicas: available},
	}
}

func TestRolloutStatus(t *testing.T) {
	cases := []struct {
		name string
		d    *appsv1.Deployment
		done bool
		msg  string
	}{
		{"spec not observed, counters complete", dep(3, 2, 3, 3, 3, 3), false, "waiting for the deployment spec update to be observed"},
		{"surge window", dep(3, 3, 3, 4, 1, 3), false, "1 out of 3 new replicas have been updated"},
		{"old replica counted", dep(3, 3, 3, 4, 3, 3), false, "1 old replicas are pending termination"},
		{"updated not available", dep(3, 3, 3, 3, 3, 2), false, "2 of 3 updated replicas are available"},
		// Terminating pods are in no counter: done while they still run.
		{"counters complete", dep(3, 3, 3, 3, 3, 3), true, "successfully rolled out"},
	}
	for _, c := range cases {
		done, msg, err := RolloutStatus(c.d)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.done, done, c.name)
		assert.Equal(t, c.msg, msg, c.name)
	}
	d := dep(3, 3, 3, 4, 1, 3)
	d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
	_, _, err := RolloutStatus(d)
	assert.ErrorContains(t, err, "exceeded its progress deadline")
}

// TestRunOrder drives Run against a fake API whose Deployments report
// "rolled out" on the third poll after an image write: the worker is
// written first, the API only after the worker's done.
func TestRunOrder(t *testing.T) {
	mk := func(name, container, image string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: container, Image: image}}}}}}
	}
	var writes []string
	reads := map[string]int{}
	c := fake.NewClientBuilder().WithScheme(manager.NewScheme()).
		WithObjects(mk("worker", "w", "worker:v1"), mk("api", "a", "api:v1")).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				writes = append(writes, obj.GetName())
				reads[obj.GetName()] = 0
				return c.Patch(ctx, obj, patch, opts...)
			},
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if err := c.Get(ctx, key, obj, opts...); err != nil {
					return err
				}
				d := obj.(*appsv1.Deployment)
				reads[key.Name]++
				d.Generation, d.Status = 2, appsv1.DeploymentStatus{ObservedGeneration: 1}
				if reads[key.Name] >= 3 { // third read since the write
					d.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}
				}
				return nil
			},
		}).Build()
	res, err := Run(context.Background(), Config{Client: c, Namespace: "ns", Interval: time.Millisecond,
		Worker: Target{Name: "worker", Container: "w", Image: "worker:v2"}, API: Target{Name: "api", Container: "a", Image: "api:v2"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"worker", "api"}, writes)
	assert.False(t, res.APIWritten.Before(res.WorkerDone), "API written before the worker was done")
	assert.Equal(t, 6, res.Polls)
	var got appsv1.Deployment
	require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "api"}, &got))
	assert.Equal(t, "api:v2", got.Spec.Template.Spec.Containers[0].Image)
}
