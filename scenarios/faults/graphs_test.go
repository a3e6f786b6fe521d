package faults

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// TestTargetsAreRefusedInOneLine: a fault aimed at a component no upgrade
// has, or at a workload kind it has no meaning for, is refused in one
// line naming the fault, the component and why; the pairings that have a
// meaning pass.
func TestTargetsAreRefusedInOneLine(t *testing.T) {
	mixed := scenarioObjects("graph-mixed")
	require.NotEmpty(t, mixed)
	for spec, want := range map[string]string{
		"never-ready:dep=db":                    "fault never-ready:dep=db cannot act on component db (statefulset store/store-db) of upgrade store/store-v2: a StatefulSet has no progress deadline",
		"never-ready:dep=node-agent":            "component node-agent (daemonset store/node-agent) of upgrade store/store-v2: a DaemonSet has no progress deadline",
		"scale@3s:dep=node-agent":               "a DaemonSet has no spec.replicas (it runs one pod per node); aim it at a Deployment or StatefulSet component",
		"edit@3s:dep=node-agent:field=replicas": "a DaemonSet has no spec.replicas",
		"bad-image:dep=indexer":                 `fault bad-image:dep=indexer: no upgrade has a component named "indexer" (components: db, node-agent, worker, api)`,
	} {
		fs, err := ParseFaults(spec)
		require.NoError(t, err, spec)
		err = RefuseTargets(mixed, fs)
		require.Error(t, err, spec)
		assert.Contains(t, err.Error(), want, spec)
		assert.NotContains(t, err.Error(), "\n", spec)
	}
	for _, spec := range []string{"never-ready:dep=worker", "scale@3s:dep=db", "edit@3s:dep=node-agent:field=restart", "crashloop:dep=node-agent",
		"bad-image:dep=db", "gitops-revert@3s:dep=db", "slow:dep=node-agent", "respec@3s:dep=all", "delete@3s", "conflict@3"} {
		fs, err := ParseFaults(spec)
		require.NoError(t, err, spec)
		assert.NoError(t, RefuseTargets(mixed, fs), spec)
	}
	fs, _ := ParseFaults("scale@3s:dep=db")
	err := RefuseTargets(scenarioObjects("demo"), fs)
	require.Error(t, err)
	assert.Equal(t, `fault scale@3s:dep=db: no upgrade has a component named "db" (components: worker, api)`, err.Error())
}

// TestGenerateAimsAtEveryGraphComponent: over 3000 seeds the graph
// scenarios draw every aimed fault, at components other than worker and
// api too, and never a pairing RefuseTargets refuses.
func TestGenerateAimsAtEveryGraphComponent(t *testing.T) {
	kinds, deps := map[Kind]int{}, map[string]int{}
	for seed := int64(1); seed <= 3000; seed++ {
		s := Generate(seed, ScenarioNames())
		require.NoError(t, RefuseTargets(scenarioObjects(s.Scenario), s.Faults), "seed %d: %s", seed, s)
		if !IsGraph(s.Scenario) {
			continue
		}
		for _, f := range s.Faults {
			if aimed[f.Kind] {
				kinds[f.Kind]++
			}
			if aimsAtComponent(f) {
				deps[s.Scenario+"/"+f.Str("dep")]++
			}
		}
	}
	for k := range aimed {
		assert.Positive(t, kinds[k], "%s never drawn on a graph", k)
	}
	for _, d := range []string{"graph-chain/db", "graph-diamond/indexer", "graph-mixed/node-agent", "graph-mixed/db", "graph-cross-namespace/api", "graph-wide/indexer"} {
		assert.Positive(t, deps[d], "%s never aimed at", d)
	}
}

// TestImageFaultsOnAGraphComponent: a component whose image cannot roll
// out fails the upgrade, naming it; what depends on it, directly or not,
// is Blocked and never written; the rest rolls out. The run's own judge
// agrees (requireOK), and the expectation is the one written here.
func TestImageFaultsOnAGraphComponent(t *testing.T) {
	for _, c := range []struct {
		scenario, spec  string
		failed, blocked []string
	}{
		{"graph-chain", "bad-image", []string{"worker"}, []string{"indexer", "api"}},
		{"graph-diamond", "crashloop:dep=worker", []string{"worker"}, []string{"api"}},
		{"graph-diamond", "bad-image:dep=db,bad-image:dep=api", []string{"db"}, []string{"worker", "indexer", "api"}},
		{"graph-wide", "never-ready:dep=indexer", []string{"indexer"}, nil},
		{"graph-cross-namespace", "bad-image:dep=api", []string{"api"}, nil},
		{"graph-mixed", "bad-image:dep=db", []string{"db"}, []string{"worker", "api"}},
		{"graph-mixed", "crashloop:dep=node-agent", []string{"node-agent"}, []string{"api"}},
	} {
		o, tr, _ := run(t, 1, c.scenario, c.spec)
		requireOK(t, o, tr)
		require.Len(t, o.Expected, 1)
		for key, e := range o.Expected {
			assert.Equal(t, ExpectFailed, e.State, c.spec)
			assert.Equal(t, c.failed, e.Failed, "%s %s", c.scenario, c.spec)
			assert.Equal(t, c.blocked, e.Blocked, "%s %s", c.scenario, c.spec)
			g := o.Result.Graphs[key]
			for _, f := range c.failed {
				assert.Contains(t, g.Status.Message, f+": ", "%s %s: the upgrade names the failed component", c.scenario, c.spec)
			}
		}
		first, err := ParseFaults(strings.Split(c.spec, ",")[0])
		require.NoError(t, err)
		assert.Contains(t, tr, "fault "+first[0].String()+": component "+c.failed[0]+" (", "the transcript names the component")
	}
}

// TestBlockedComponentWriteIsCaught: the event-log check flags a write of
// a component that depends on a failed one, and passes without it.
func TestBlockedComponentWriteIsCaught(t *testing.T) {
	fs, err := ParseFaults("bad-image:dep=db")
	require.NoError(t, err)
	objs := Prepare(scenarioObjects("graph-chain"), fs)
	in := NewInjector(Schedule{Scenario: "graph-chain", Faults: fs}, objs, nil)
	key := upgradesIn(objs)[0]
	s := in.spec[client.ObjectKeyFromObject(key)]
	want := s.expect()
	require.Equal(t, []string{"worker", "indexer", "api"}, want.Blocked)
	created := eventlog.Event{T: 0, Event: eventlog.DeploymentWrite, Namespace: "shop", Deployment: "shop-indexer",
		Containers: []eventlog.Container{{Name: "indexer", Image: "registry.example.com/shop-indexer:v2.0.0"}}}
	written := created
	written.T, written.Containers = 31.5, []eventlog.Container{{Name: "indexer", Image: "registry.example.com/shop-indexer:v3.0.0"}}
	// db failed, so the operator never wrote it with its target: that is flagged too
	in.writeLog = []Write{{Deployment: "shop/shop-db", Image: "registry.example.com/shop-db:does-not-exist"}}
	assert.Empty(t, in.checkWrites("shop/shop-v3", s, want, []eventlog.Event{created}))
	v := in.checkWrites("shop/shop-v3", s, want, []eventlog.Event{created, written})
	require.Len(t, v, 1)
	assert.Equal(t, "upgrade shop/shop-v3: component indexer (deployment shop/shop-indexer) was written at 31.5s (image registry.example.com/shop-indexer:v3.0.0) although it depends on a failed component (db): a blocked component is never written", v[0])
	in.writeLog = nil
	v = in.checkWrites("shop/shop-v3", s, want, []eventlog.Event{created})
	assert.Equal(t, []string{"upgrade shop/shop-v3: component db (deployment shop/shop-db) ended failed but the operator never wrote its image registry.example.com/shop-db:does-not-exist"}, v)
}

// TestClusterActorsOnGraphs: scale, edit, slow, respec, delete and
// gitops-revert aimed at graph components of every kind end as expected
// (Completed) with no violation.
func TestClusterActorsOnGraphs(t *testing.T) {
	for _, c := range []struct{ scenario, spec string }{
		{"graph-mixed", "scale@5s:dep=db:replicas=4,edit@8s:dep=node-agent:field=restart"},
		{"graph-mixed", "slow:dep=node-agent:ready=20s:exit=10s,edit@3s:dep=db:field=annotations"},
		{"graph-mixed", "gitops-revert@2s:dep=db:every=5s:for=30s"},
		{"graph-diamond", "respec@10s:dep=indexer,scale@4s:dep=api:replicas=1"},
		{"graph-chain", "delete@20s:recreate=10s"},
		{"graph-cross-namespace", "edit@5s:dep=api:field=replicas,gitops-revert@10s:dep=api:ignore=true"},
		{"graph-wide", "bad-image:dep=db,respec@1s:dep=db"},
	} {
		o, tr, _ := run(t, 3, c.scenario, c.spec)
		requireOK(t, o, tr)
		assert.Equal(t, ExpectCompleted, o.ExpectedState(), "%s %s", c.scenario, c.spec)
	}
	o, tr, _ := run(t, 3, "graph-diamond", "respec@10s:dep=indexer")
	requireOK(t, o, tr)
	assert.Contains(t, tr, "upgrade shop/shop-v3 now targets db=registry.example.com/shop-db:v3.0.0, worker=registry.example.com/shop-worker:v3.0.0, indexer=registry.example.com/shop-indexer:v4.0.0")
	assert.Equal(t, upgradesv1beta1.PhaseCompleted, o.Result.Graphs["shop/shop-v3"].Status.Phase)
}
