package appupgrade

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// A StatefulSet component at its target image whose rollout waits on a
// person (partition, OnDelete) stays RollingOut with that reason, which
// becomes the upgrade's reason (Ready/Progressing conditions, Warning
// event); its dependent is not written. Messages name the kind.
func TestDecideWaitsForAPersonOnStatefulSets(t *testing.T) {
	for _, reason := range []string{rollout.ReasonPartitioned, rollout.ReasonOnDelete} {
		t.Run(reason, func(t *testing.T) {
			db := v1beta1.Component{Name: "db", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindStatefulSet, Name: "shop-db"}, Image: "db:v2"}
			api := v1beta1.Component{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "shop-api"}, Image: "api:v2", DependsOn: []string{"db"}}
			u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "u", Generation: 1},
				Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{db, api}},
				Status: v1beta1.ApplicationUpgradeStatus{Phase: v1beta1.PhaseProgressing, ObservedGeneration: 1, Components: []v1beta1.ComponentStatus{
					{Name: "db", Phase: v1beta1.ComponentRollingOut}, {Name: "api", Phase: v1beta1.ComponentPending, Wave: 1}}}}
			g := Graph{Upgrade: u, Components: []Component{
				{Spec: db, Key: types.NamespacedName{Namespace: "shop", Name: "shop-db"}, Kind: v1beta1.KindStatefulSet, Workload: &appsv1.StatefulSet{},
					Container: "db", Image: "db:v2", Rollout: rollout.Verdict{State: rollout.Progressing, Reason: reason, Message: "lower the partition"}},
				{Spec: api, Key: types.NamespacedName{Namespace: "shop", Name: "shop-api"}, Deployment: &appsv1.Deployment{},
					Container: "api", Image: "api:v1", Rollout: rollout.Verdict{State: rollout.Rolled}},
			}}
			p := Decide(g)
			require.Empty(t, p.Writes)
			assert.Equal(t, v1beta1.ComponentRollingOut, p.Components[0].Phase)
			assert.Equal(t, reason, p.Components[0].Reason)
			assert.Equal(t, "Waiting for a person: lower the partition", p.Components[0].Message)
			assert.Equal(t, reason, p.Reason)
			assert.True(t, WaitingReasons[p.Reason])
		})
	}
}

// An image write names the workload's kind; a StatefulSet component's
// messages name it as "statefulset namespace/name".
func TestDecideWritesByKind(t *testing.T) {
	db := v1beta1.Component{Name: "db", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindStatefulSet, Name: "shop-db"}, Image: "db:v2"}
	u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "u", Generation: 1},
		Spec:   v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{db}},
		Status: v1beta1.ApplicationUpgradeStatus{Phase: v1beta1.PhaseProgressing, ObservedGeneration: 1, Components: []v1beta1.ComponentStatus{{Name: "db", Phase: v1beta1.ComponentPending}}}}
	c := Component{Spec: db, Key: types.NamespacedName{Namespace: "shop", Name: "shop-db"}, Kind: v1beta1.KindStatefulSet, Workload: &appsv1.StatefulSet{},
		Container: "db", Image: "db:v1", Rollout: rollout.Verdict{State: rollout.Rolled}}
	p := Decide(Graph{Upgrade: u, Components: []Component{c}})
	assert.Equal(t, "Upgrading statefulset shop/shop-db", p.Components[0].Message)
	u.Status.Components[0].Phase = v1beta1.ComponentUpgrading
	p = Decide(Graph{Upgrade: u, Components: []Component{c}})
	require.Len(t, p.Writes, 1)
	assert.Equal(t, v1beta1.WorkloadKey{Kind: v1beta1.KindStatefulSet, Namespace: "shop", Name: "shop-db"}, p.Writes[0].Workload)
}
