package judge

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// chain is worker (w) ← api (a) in namespace ns, the Pair of
// ordering_test.go, plus remote depending on worker from another namespace.
func chain() *v1beta1.ApplicationUpgrade {
	return &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
			{Name: "worker", DeploymentRef: v1beta1.DeploymentReference{Name: "w"}, Image: "w:2"},
			{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "a"}, Image: "a:2", DependsOn: []string{"worker"}},
			{Name: "remote", DeploymentRef: v1beta1.DeploymentReference{Name: "r", Namespace: "other"}, Image: "r:2", DependsOn: []string{"worker"}},
		}}}
}

func TestEdges(t *testing.T) {
	edges := Edges(chain())
	require.Len(t, edges, 2)
	assert.Equal(t, Edge{Dependency: "worker", Dependent: "api", Pair: pair}, edges[0])
	assert.Equal(t, "remote", edges[1].Dependent)
	assert.Equal(t, Pair{Namespace: "other", API: "r", Worker: "w", WorkerNamespace: "ns"}, edges[1].Pair, "a cross-namespace edge is judged in both namespaces")
}

func TestGraphOrderingIsOrderingPerEdge(t *testing.T) {
	early := append(safeRun()[:6], ev(4, eventlog.DeploymentWrite, "a", "a", "a:2", "7"))
	for name, events := range map[string][]eventlog.Event{"safe": safeRun(), "early": early} {
		reps := GraphOrdering(events, chain())
		require.Len(t, reps, 2, name)
		assert.Equal(t, Ordering(events, pair), reps[0].Report, name)
		assert.Equal(t, -1.0, reps[1].Handoff, "%s: the remote Deployment is never written", name)
	}
	safe := GraphOrdering(safeRun(), chain())
	assert.Equal(t, 0.25, safe[0].Handoff)
	assert.Empty(t, Combine(safe).Violations)

	bad := Combine(GraphOrdering(early, chain()))
	require.Len(t, bad.Violations, 1)
	assert.Equal(t, "worker → api: t=4.000s: API image a:2 written while old worker pod w-old (hash h-w:1, c=w:1) still exists (terminating)", bad.Violations[0])
	assert.Equal(t, 1, bad.APIWrites)
	assert.Equal(t, -1.0, bad.Handoff, "a combined report has no single handoff")
}

// An edge from a StatefulSet callee is judged on the StatefulSet's pods,
// not on a Deployment of the same name.
func TestGraphOrderingStatefulSetCallee(t *testing.T) {
	u := &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u"},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: []v1beta1.Component{
			{Name: "db", WorkloadRef: &v1beta1.WorkloadReference{Kind: v1beta1.KindStatefulSet, Name: "db"}, Image: "db:2"},
			{Name: "api", DeploymentRef: v1beta1.DeploymentReference{Name: "a"}, Image: "a:2", DependsOn: []string{"db"}},
		}}}
	edges := Edges(u)
	require.Len(t, edges, 1)
	assert.Equal(t, Pair{Namespace: "ns", Worker: "db", WorkerKind: "StatefulSet", API: "a"}, edges[0].Pair)
	sts := func(event, name, hash, rv string) eventlog.Event {
		return eventlog.Event{Event: event, Kind: "StatefulSet", Namespace: "ns", Name: name, Deployment: "db", Hash: hash, RV: rv}
	}
	events := []eventlog.Event{
		{Event: eventlog.DeploymentWrite, Kind: "StatefulSet", Namespace: "ns", Name: "db", Deployment: "db", RV: "1"},
		{Event: eventlog.Revision, Kind: "StatefulSet", Namespace: "ns", Name: "db", Deployment: "db", HashAfter: "db-1", RV: "2"},
		sts(eventlog.PodCreated, "db-0", "db-1", "3"),
		{Event: eventlog.DeploymentWrite, Namespace: "ns", Name: "a", Deployment: "a", Image: "a:1", HashAfter: "ha", RV: "4"},
		{Event: eventlog.DeploymentWrite, Kind: "StatefulSet", Namespace: "ns", Name: "db", Deployment: "db", Container: "db", Image: "db:2", RV: "5"},
		{Event: eventlog.Revision, Kind: "StatefulSet", Namespace: "ns", Name: "db", Deployment: "db", HashBefore: "db-1", HashAfter: "db-2", RV: "6"},
		sts(eventlog.PodDeleting, "db-0", "db-1", "7"),
	}
	early := append(append([]eventlog.Event(nil), events...),
		eventlog.Event{Event: eventlog.DeploymentWrite, Namespace: "ns", Name: "a", Deployment: "a", Container: "c", Image: "a:2", HashBefore: "ha", HashAfter: "hb", RV: "8"})
	bad := Combine(GraphOrdering(early, u))
	require.Len(t, bad.Violations, 1)
	assert.Contains(t, bad.Violations[0], "old worker pod db-0 (hash db-1")
	late := append(append([]eventlog.Event(nil), events...), sts(eventlog.PodDeleted, "db-0", "db-1", "8"),
		sts(eventlog.PodCreated, "db-0", "db-2", "9"),
		eventlog.Event{Event: eventlog.DeploymentWrite, Namespace: "ns", Name: "a", Deployment: "a", Container: "c", Image: "a:2", HashBefore: "ha", HashAfter: "hb", RV: "10"})
	good := GraphOrdering(late, u)
	assert.Empty(t, Combine(good).Violations)
	assert.Equal(t, 1, good[0].APIWrites)
}
