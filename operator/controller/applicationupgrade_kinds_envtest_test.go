//go:build envtest

package controller

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// stsGraph is db (StatefulSet, workloadRef) ← api (Deployment, deploymentRef).
func stsGraph(ns string) *v1beta1.ApplicationUpgrade {
	return &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-v3"},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
			{Name: "db", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindStatefulSet, Name: "db"}, Image: "registry.example.com/db:v2"},
			{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "job-api"}, Image: apiV2, DependsOn: []string{"db"}},
		}}}
}

// TestEnvtestWorkloadRefAdmission: the CRD's schema on a real API server
// refuses both references, neither, an unknown kind, a changed workloadRef
// and a switch between the two forms, each with its rule's message.
func TestEnvtestWorkloadRefAdmission(t *testing.T) {
	w := newEnvWorld(t)
	refused := func(u *v1beta1.ApplicationUpgrade, want string) {
		t.Helper()
		err := w.c.Create(w.ctx, u)
		require.True(t, apierrors.IsInvalid(err), "%v", err)
		assert.Contains(t, err.Error(), want)
	}
	both := stsGraph(w.ns)
	both.Spec.Components[0].DeploymentRef = v1beta1.DeploymentReference{Name: "db"}
	refused(both, "exactly one of deploymentRef (a Deployment) and workloadRef")
	none := stsGraph(w.ns)
	none.Spec.Components[0].WorkloadRef = nil
	refused(none, "exactly one of deploymentRef (a Deployment) and workloadRef")
	cron := stsGraph(w.ns)
	cron.Spec.Components[0].WorkloadRef.Kind = "CronJob"
	refused(cron, `supported values: "Deployment", "StatefulSet", "DaemonSet"`)

	u := stsGraph(w.ns)
	require.NoError(t, w.c.Create(w.ctx, u))
	var got v1beta1.ApplicationUpgrade
	require.NoError(t, w.c.Get(w.ctx, w.key(u.Name), &got))
	require.NotNil(t, got.Spec.Components[0].WorkloadRef)
	assert.Equal(t, v1beta1.DeploymentReference{}, got.Spec.Components[0].DeploymentRef, "deploymentRef stays absent (omitzero)")

	renamed := got.DeepCopy()
	renamed.Spec.Components[0].WorkloadRef.Name = "db-2"
	err := w.c.Update(w.ctx, renamed)
	require.True(t, apierrors.IsInvalid(err), "%v", err)
	assert.Contains(t, err.Error(), "workloadRef is immutable")

	switched := got.DeepCopy()
	switched.Spec.Components[1].DeploymentRef = v1beta1.DeploymentReference{}
	switched.Spec.Components[1].WorkloadRef = &v1beta1.WorkloadReference{Kind: v1beta1.KindDeployment, Name: "job-api"}
	err = w.c.Update(w.ctx, switched)
	require.True(t, apierrors.IsInvalid(err), "%v", err)
	assert.Contains(t, err.Error(), "cannot move between deploymentRef and workloadRef")

	retagged := got.DeepCopy()
	retagged.Spec.Components[0].Image = "registry.example.com/db:v3"
	require.NoError(t, w.c.Update(w.ctx, retagged), "an image change is allowed")
}

// TestEnvtestStatefulSetGraphThroughV1alpha1: a v1alpha1 client reads the
// StatefulSet graph through the conversion webhook (the StatefulSet as its
// worker, by name), changes the worker's image, and the stored graph keeps
// the StatefulSet kind.
func TestEnvtestStatefulSetGraphThroughV1alpha1(t *testing.T) {
	w := newEnvWorld(t)
	require.NoError(t, w.c.Create(w.ctx, stsGraph(w.ns)))
	alpha := w.upgrade("shop-v3")
	assert.Equal(t, "db", alpha.Spec.Worker.DeploymentRef.Name)
	require.Contains(t, alpha.Annotations, v1.ConversionDataAnnotation)
	alpha.Spec.Worker.Image = "registry.example.com/db:v4"
	require.NoError(t, w.c.Update(w.ctx, alpha))
	var got v1beta1.ApplicationUpgrade
	require.NoError(t, w.c.Get(w.ctx, w.key("shop-v3"), &got))
	require.NotNil(t, got.Spec.Components[0].WorkloadRef)
	assert.Equal(t, v1beta1.KindStatefulSet, got.Spec.Components[0].WorkloadRef.Kind)
	assert.Equal(t, "registry.example.com/db:v4", got.Spec.Components[0].Image)
}

// TestEnvtestStatefulSetImageWrite: on a real API server the reconciler
// reads the StatefulSet and writes its image by server-side apply under
// upgrade-operator, owning only that container's image; status names the kind.
func TestEnvtestStatefulSetImageWrite(t *testing.T) {
	w := newEnvWorld(t)
	labels := map[string]string{"app": "db"}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "db"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "registry.example.com/db:v1"},
					{Name: "metrics", Image: "registry.example.com/metrics:v1"}}}}}}
	require.NoError(t, w.c.Create(w.ctx, sts))
	w.createDeployment("job-api", 1, "api", apiV1)
	u := stsGraph(w.ns)
	u.Spec.Components[0].ContainerName = "db"
	require.NoError(t, w.c.Create(w.ctx, u))
	for i := 0; i < 4; i++ {
		w.reconcile("shop-v3")
	}
	require.NoError(t, w.c.Get(w.ctx, w.key("db"), sts))
	assert.Equal(t, "registry.example.com/db:v2", sts.Spec.Template.Spec.Containers[0].Image)
	assert.Equal(t, "registry.example.com/metrics:v1", sts.Spec.Template.Spec.Containers[1].Image)
	var mine []metav1.ManagedFieldsEntry
	for _, e := range sts.ManagedFields {
		if e.Manager == FieldManager {
			mine = append(mine, e)
		}
	}
	require.Len(t, mine, 1)
	var got, want any
	require.NoError(t, json.Unmarshal(mine[0].FieldsV1.Raw, &got))
	require.NoError(t, json.Unmarshal([]byte(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"db\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`), &want))
	assert.Equal(t, want, got)
	assert.Equal(t, apiV1, imageOf(w.deployment("job-api"), "api"), "api waits: no StatefulSet controller runs, so db never rolls out")

	var b v1beta1.ApplicationUpgrade
	require.NoError(t, w.c.Get(w.ctx, w.key("shop-v3"), &b))
	assert.Equal(t, v1beta1.KindStatefulSet, b.Status.Component("db").Kind)
	assert.Equal(t, v1beta1.ComponentRollingOut, b.Status.Component("db").Phase)
	assert.Contains(t, b.Status.Component("db").Message, "waiting for the statefulset controller to observe generation")
	assert.Equal(t, "1 StatefulSet, 1 Deployment", b.Status.Workloads)
}

// TestEnvtestRawWorkloadRefRefused: raw JSON a typed client cannot send —
// both references, none, an unknown or missing kind, an unknown field in
// workloadRef — is refused by a strict create (what kubectl sends).
func TestEnvtestRawWorkloadRefRefused(t *testing.T) {
	w := newEnvWorld(t)
	head := `"apiVersion":"upgrades.lunadas.dev/v1beta1","kind":"ApplicationUpgrade","metadata":{"namespace":"` + w.ns + `","name":"raw"}`
	for name, comp := range map[string]string{
		"both":          `{"name":"a","deploymentRef":{"name":"app"},"workloadRef":{"kind":"StatefulSet","name":"app"},"image":"registry.example.com/a:v2"}`,
		"none":          `{"name":"a","image":"registry.example.com/a:v2"}`,
		"kind":          `{"name":"a","workloadRef":{"kind":"CronJob","name":"app"},"image":"registry.example.com/a:v2"}`,
		"no kind":       `{"name":"a","workloadRef":{"name":"app"},"image":"registry.example.com/a:v2"}`,
		"unknown field": `{"name":"a","workloadRef":{"kind":"StatefulSet","name":"app","apiVersion":"apps/v1"},"image":"registry.example.com/a:v2"}`,
	} {
		var u unstructured.Unstructured
		require.NoError(t, u.UnmarshalJSON([]byte("{"+head+`,"spec":{"components":[`+comp+"]}}")), name)
		err := w.c.Create(w.ctx, &u, client.FieldValidation("Strict"))
		require.Error(t, err, name)
		t.Logf("%s: %v", name, err)
	}
}
