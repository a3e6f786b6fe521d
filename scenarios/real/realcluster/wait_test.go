package realcluster

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// rolledByPodList is a Deployment of one replica whose only pod, of the
// new template, is Ready, while its status says available (the counters)
// as given: the pod-list rule calls it rolled out whatever the counters.
func rolledByPodList(available int32, podReady corev1.ConditionStatus, waiting string) []client.Object {
	labels := map[string]string{"app": "db"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "db:v1"}}}}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "d-uid", Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: available},
	}
	rsTmpl := *tmpl.DeepCopy()
	rsTmpl.Labels = map[string]string{"app": "db", appsv1.DefaultDeploymentUniqueLabelKey: "h1"}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db-h1", UID: "rs-uid", Labels: rsTmpl.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: rsTmpl.Labels}, Template: rsTmpl},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db-h1-a", Labels: rsTmpl.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
		Spec:   rsTmpl.Spec,
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: podReady}}},
	}
	if waiting != "" {
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "db:v1",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}}}}
	}
	return []client.Object{d, rs, pod}
}

func waitClient(t *testing.T, objs []client.Object) client.Reader {
	s := runtime.NewScheme()
	require.NoError(t, appsv1.AddToScheme(s))
	require.NoError(t, corev1.AddToScheme(s))
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

// The pod list says rolled out before the Deployment controller publishes
// it (kcm lags the last pod's readiness): RolledOut says done,
// RolledOutAndPublished waits for the counters, and says done once they
// are complete.
func TestRolledOutAndPublishedWaitsForTheCounters(t *testing.T) {
	ctx := context.Background()
	c := waitClient(t, rolledByPodList(0, corev1.ConditionTrue, ""))
	done, why, err := RolledOut(ctx, c, "ns", true)
	require.NoError(t, err)
	assert.True(t, done, "pod-list rule: %s", why)
	done, why, err = RolledOutAndPublished(ctx, c, "ns", true)
	require.NoError(t, err)
	assert.False(t, done)
	assert.Contains(t, why, "deployment db: generation 1 observed 1, replicas 1 updated 1 available 0 of 1")

	c = waitClient(t, rolledByPodList(1, corev1.ConditionTrue, ""))
	done, why, err = RolledOutAndPublished(ctx, c, "ns", true)
	require.NoError(t, err)
	assert.True(t, done, why)
}

// A failed Deployment (its pod cannot pull its image) counts when
// failedCounts, as in RolledOut: its counters will never be complete and
// are not waited for.
func TestRolledOutAndPublishedDoesNotWaitForAFailedDeployment(t *testing.T) {
	ctx := context.Background()
	c := waitClient(t, rolledByPodList(0, corev1.ConditionFalse, "ImagePullBackOff"))
	done, why, err := RolledOutAndPublished(ctx, c, "ns", true)
	require.NoError(t, err)
	assert.True(t, done, why)
	done, _, err = RolledOutAndPublished(ctx, c, "ns", false)
	require.NoError(t, err)
	assert.False(t, done)
}
