package simrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

type clientObject = client.Object

func TestCheckKindAcceptsModelledAndInertKindsAndRefusesOthersInOneLine(t *testing.T) {
	for _, o := range append(append(Modelled[:0:0], Modelled...), Inert...) {
		assert.NoError(t, CheckKind(o), "%T", o)
	}
	meta := metav1.ObjectMeta{Namespace: "job-system", Name: "q"}
	for _, tc := range []struct {
		obj  clientObject
		want string
	}{
		{&corev1.LimitRange{ObjectMeta: meta}, "limitrange job-system/q: the simulator does not model kind LimitRange"},
		{&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta}, "horizontalpodautoscaler job-system/q: the simulator does not model kind HorizontalPodAutoscaler"},
	} {
		err := CheckKind(tc.obj)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "it models Namespace, Deployment, StatefulSet, DaemonSet, ControllerRevision, ResourceQuota, ApplicationUpgrade and accepts as inert Service, ConfigMap, Secret, ServiceAccount")
			assert.NotContains(t, err.Error(), "\n")
		}
	}
	sts := &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{}}}}
	err := CheckKind(sts)
	if assert.Error(t, err) {
		assert.Equal(t, "statefulset job-system/q: the simulator does not model PersistentVolumeClaims (spec.volumeClaimTemplates); remove them or run on a real cluster", err.Error())
	}
}
