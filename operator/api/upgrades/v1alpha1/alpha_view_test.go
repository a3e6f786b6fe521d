package v1alpha1

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// TestV1alpha1ViewPicksByUpgradeOrder: worker is the first component in
// wave order, api the last, whatever the spec order; a cross-namespace
// graph shows both.
func TestV1alpha1ViewPicksByUpgradeOrder(t *testing.T) {
	hub := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"}, Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
		{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "api", Namespace: "front"}, Image: "api:v2", DependsOn: []string{"worker", "indexer"}},
		{Name: "indexer", DeploymentRef: v1beta1.DeploymentReference{Name: "indexer"}, Image: "indexer:v2", DependsOn: []string{"db"}},
		{Name: "worker", DeploymentRef: v1beta1.DeploymentReference{Name: "worker"}, Image: "worker:v2", DependsOn: []string{"db"}},
		{Name: "db", DeploymentRef: v1beta1.DeploymentReference{Name: "db", Namespace: "data"}, Image: "db:v2"},
	}}, Status: v1beta1.ApplicationUpgradeStatus{Components: []v1beta1.ComponentStatus{
		{Name: "api", Image: "api:v1", ShortImage: "api:v1"}, {Name: "db", Image: "db:v1", ShortImage: "db:v1"}}}}
	a := &ApplicationUpgrade{}
	require.NoError(t, a.ConvertFrom(hub))
	require.Equal(t, "db", a.Spec.Worker.DeploymentRef.Name)
	require.Equal(t, "api", a.Spec.API.DeploymentRef.Name)
	require.Equal(t, "db:v1", a.Status.Worker.ShortImage)
	require.Equal(t, "api:v1", a.Status.API.ShortImage)

	a.Spec.Worker.Image = "db:v3" // the edit lands on db
	back := &v1beta1.ApplicationUpgrade{}
	require.NoError(t, a.ConvertTo(back))
	require.Len(t, back.Spec.Components, 4)
	require.Equal(t, "db:v3", back.Spec.Components[3].Image)
	require.Equal(t, "data", back.Spec.Components[3].DeploymentRef.Namespace)
	require.NoError(t, AlphaWriteError(hub, back))

	delete(a.Annotations, ConversionDataAnnotation)
	dropped := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"}}
	require.NoError(t, a.ConvertTo(dropped))
	err := AlphaWriteError(hub, dropped)
	require.ErrorContains(t, err, "keep that annotation unchanged, or make the change with upgrades.lunadas.dev/v1beta1")
}
