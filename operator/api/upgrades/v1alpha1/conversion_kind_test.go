package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// statefulGraph is db (a StatefulSet, by workloadRef) ← api (a Deployment).
func statefulGraph() *v1beta1.ApplicationUpgrade {
	return &v1beta1.ApplicationUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "v3", Generation: 1},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
			{Name: "db", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindStatefulSet, Name: "shop-db"}, Image: "db:v3"},
			{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "shop-api"}, Image: "api:v3", DependsOn: []string{"db"}},
		}},
	}
}

// TestStatefulSetComponentRoundTripsThroughV1alpha1: v1alpha1 shows the
// StatefulSet by name as its worker; the kind comes back from the
// conversion annotation, and a v1alpha1 edit of the image keeps it.
func TestStatefulSetComponentRoundTripsThroughV1alpha1(t *testing.T) {
	in := statefulGraph()
	var spoke ApplicationUpgrade
	require.NoError(t, spoke.ConvertFrom(in))
	assert.Equal(t, "shop-db", spoke.Spec.Worker.DeploymentRef.Name)
	require.Contains(t, spoke.Annotations, ConversionDataAnnotation, "v1alpha1 cannot say StatefulSet: the annotation must carry it")

	var back v1beta1.ApplicationUpgrade
	require.NoError(t, viaJSON(t, &spoke).ConvertTo(&back))
	assert.Equal(t, in.Spec, back.Spec)

	// A v1alpha1 client changes the worker's image: the kind is kept and
	// the write is what v1alpha1 can say.
	edited := viaJSON(t, &spoke)
	edited.Spec.Worker.Image = "db:v4"
	var merged v1beta1.ApplicationUpgrade
	require.NoError(t, edited.ConvertTo(&merged))
	require.NotNil(t, merged.Spec.Components[0].WorkloadRef)
	assert.Equal(t, v1beta1.KindStatefulSet, merged.Spec.Components[0].WorkloadRef.Kind)
	assert.Equal(t, "db:v4", merged.Spec.Components[0].Image)
	assert.Equal(t, v1beta1.DeploymentReference{}, merged.Spec.Components[0].DeploymentRef, "the name goes into workloadRef, not a second reference")
	assert.NoError(t, AlphaWriteError(in, &merged))
}

// TestV1alpha1WriteDroppingTheKindIsRefused: a v1alpha1 update without the
// annotation would turn the StatefulSet component into a Deployment named
// worker; admission refuses it and names the kind it would lose.
func TestV1alpha1WriteDroppingTheKindIsRefused(t *testing.T) {
	old := statefulGraph()
	var spoke ApplicationUpgrade
	require.NoError(t, spoke.ConvertFrom(old))
	delete(spoke.Annotations, ConversionDataAnnotation)
	var u v1beta1.ApplicationUpgrade
	require.NoError(t, spoke.ConvertTo(&u))
	err := AlphaWriteError(old, &u)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "db(StatefulSet db:v3)")
	assert.Contains(t, err.Error(), "keep that annotation unchanged, or make the change with upgrades.lunadas.dev/v1beta1")
}

// TestV1alpha1StatusNamesDeployments: a v1alpha1 status converts to
// component statuses of kind Deployment and the WORKLOADS summary, so a
// plain two-Deployment upgrade needs no annotation.
func TestV1alpha1StatusNamesDeployments(t *testing.T) {
	in := ApplicationUpgrade{Status: ApplicationUpgradeStatus{Phase: PhaseWaitingForWorkers}}
	var hub v1beta1.ApplicationUpgrade
	require.NoError(t, in.ConvertTo(&hub))
	require.Len(t, hub.Status.Components, 2)
	for _, c := range hub.Status.Components {
		assert.Equal(t, v1beta1.KindDeployment, c.Kind)
	}
	assert.Equal(t, "2 Deployment", hub.Status.Workloads)
}

// TestAnUnreadableConversionAnnotationIsRefusedNotDropped: a v1alpha1
// write carrying a conversion annotation ConvertFrom did not write (not
// JSON, or JSON of another shape) keeps it through ConvertTo, and
// admission refuses the write, on a create and on an update alike; a
// record ConvertFrom wrote is still consumed.
func TestAnUnreadableConversionAnnotationIsRefusedNotDropped(t *testing.T) {
	old := statefulGraph()
	for _, bad := range []string{"not json at all", `{"components":[{"name":"evil"}]}`, `{"spec":{"components":[]},"status":{},"extra":1}`, `{"spec":{}} {"spec":{}}`} {
		var spoke ApplicationUpgrade
		require.NoError(t, spoke.ConvertFrom(old))
		spoke.Annotations[ConversionDataAnnotation] = bad
		var u v1beta1.ApplicationUpgrade
		require.NoError(t, viaJSON(t, &spoke).ConvertTo(&u), bad)
		assert.Equal(t, bad, u.Annotations[ConversionDataAnnotation], "kept for admission: %s", bad)
		for _, prev := range []*v1beta1.ApplicationUpgrade{nil, old} {
			err := AlphaWriteError(prev, &u)
			require.Error(t, err, bad)
			assert.Contains(t, err.Error(), "is not a conversion record this operator wrote", bad)
		}
	}
	var spoke ApplicationUpgrade
	require.NoError(t, spoke.ConvertFrom(old))
	var u v1beta1.ApplicationUpgrade
	require.NoError(t, viaJSON(t, &spoke).ConvertTo(&u))
	assert.NotContains(t, u.Annotations, ConversionDataAnnotation)
	assert.NoError(t, AlphaWriteError(old, &u))
}
