package webhook

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// kindComp is component name on the workload kind/name (in the upgrade's namespace).
func kindComp(name string, kind v1beta1.WorkloadKind, workload string, deps ...string) v1beta1.Component {
	return v1beta1.Component{Name: name, WorkloadRef: &v1beta1.WorkloadReference{Kind: kind, Name: workload},
		Image: "registry.example.com/" + name + ":v2", DependsOn: deps}
}

// The SubjectAccessReviews ask for the referenced kind's resource, and a
// refusal names it.
func TestValidatorAsksForTheReferencedKind(t *testing.T) {
	authz := &rbac{grants: map[string]bool{
		"tenant get statefulsets shop/*": true, "tenant patch statefulsets shop/*": true,
		"tenant get daemonsets shop/*":  true,
		"tenant get deployments shop/*": true, "tenant patch deployments shop/*": true,
	}}
	v := validator(t, authz, false)
	u := upgrade("shop", "up", kindComp("db", v1beta1.KindStatefulSet, "db"), kindComp("agent", v1beta1.KindDaemonSet, "agent"),
		comp("api", "api", "db", "agent"))
	_, err := v.ValidateCreate(asUser("tenant"), u)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `user "tenant" may not patch daemonsets.apps "agent" in namespace "shop"`)
	assert.Contains(t, err.Error(), "an ApplicationUpgrade may only name workloads its author may get and patch")
	assert.NotContains(t, err.Error(), "statefulsets.apps")
	assert.ElementsMatch(t, []string{
		"tenant get statefulsets shop/db", "tenant patch statefulsets shop/db",
		"tenant get daemonsets shop/agent", "tenant patch daemonsets shop/agent",
		"tenant get deployments shop/api", "tenant patch deployments shop/api"}, authz.asked)
}

// The overlap guard keys workloads by kind: a StatefulSet and a Deployment
// of the same name are different workloads; the same StatefulSet twice is
// refused, naming its kind; deploymentRef and workloadRef{kind: Deployment}
// name the same Deployment.
func TestOverlapGuardByKind(t *testing.T) {
	holder := withPhase(upgrade("shop", "older", kindComp("db", v1beta1.KindStatefulSet, "db")), v1beta1.PhaseProgressing, 1)
	require.NoError(t, Check(nil, upgrade("shop", "new", comp("db", "db")), []v1beta1.ApplicationUpgrade{holder}))
	err := Check(nil, upgrade("shop", "new", kindComp("x", v1beta1.KindStatefulSet, "db")), []v1beta1.ApplicationUpgrade{holder})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.components[x]: statefulset shop/db is already being upgraded by applicationupgrade shop/older")

	dep := withPhase(upgrade("shop", "older", comp("api", "api")), v1beta1.PhaseProgressing, 1)
	err = Check(nil, upgrade("shop", "new", kindComp("api", v1beta1.KindDeployment, "api")), []v1beta1.ApplicationUpgrade{dep})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "deployment shop/api is already being upgraded")
}

// A component naming its workload twice, or not at all, is refused with
// what to fix (the CRD's CEL rule says the same on a real API server).
func TestExactlyOneReference(t *testing.T) {
	both := kindComp("db", v1beta1.KindStatefulSet, "db")
	both.DeploymentRef = v1beta1.DeploymentReference{Name: "db"}
	err := Check(nil, upgrade("shop", "u", both), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.components[db] sets both deploymentRef and workloadRef: keep exactly one")

	none := v1beta1.Component{Name: "db", Image: "db:v2"}
	err = Check(nil, upgrade("shop", "u", none), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.components[db] names no workload: set deploymentRef.name, or workloadRef with kind")

	bad := kindComp("db", "CronJob", "db")
	err = Check(nil, upgrade("shop", "u", bad), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `spec.components[db].workloadRef.kind is "CronJob": use Deployment, StatefulSet or DaemonSet`)
}

// A cross-namespace workloadRef is refused naming workloadRef.namespace.
func TestCrossNamespaceWorkloadRef(t *testing.T) {
	c := kindComp("db", v1beta1.KindStatefulSet, "db")
	c.WorkloadRef.Namespace = "data"
	err := Check(nil, upgrade("shop", "u", c), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `spec.components[db].workloadRef.namespace is "data", not the upgrade's namespace "shop"`)
}
