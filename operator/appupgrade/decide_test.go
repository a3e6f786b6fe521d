package appupgrade

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// world is a toy cluster for Decide: each Deployment has an image and a
// rollout state; a write sets the image and starts a rollout.
type world struct {
	u      *v1beta1.ApplicationUpgrade
	image  map[string]string
	state  map[string]rollout.State
	writes []string
	seed   uint64 // printed on failure when set
}

func newWorld(cs ...v1beta1.Component) *world {
	w := &world{u: &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "u", Generation: 1},
		Spec: v1beta1.ApplicationUpgradeSpec{Components: cs}}, image: map[string]string{}, state: map[string]rollout.State{}}
	for _, c := range cs {
		w.image[c.Name], w.state[c.Name] = c.Name+":v1", rollout.Rolled
	}
	return w
}

func (w *world) graph() Graph {
	g := Graph{Upgrade: w.u}
	for _, c := range w.u.Spec.Components {
		g.Components = append(g.Components, Component{Spec: c, Key: types.NamespacedName{Namespace: "ns", Name: c.DeploymentRef.Name},
			Deployment: &appsv1.Deployment{}, Container: "main", Image: w.image[c.Name], Rollout: rollout.Verdict{State: w.state[c.Name]}})
	}
	return g
}

// pass runs Decide, applies its writes and records its phases in status.
func (w *world) pass(t *testing.T) Plan {
	g := w.graph()
	p := Decide(g)
	for _, wr := range p.Writes {
		for _, c := range g.Components {
			if c.Spec.Name == wr.Component {
				for _, d := range c.Spec.DependsOn {
					require.Truef(t, w.image[d] == d+":v2" && w.state[d] == rollout.Rolled,
						"%s written while dependency %s is %s/%s (seed %d; replay: go test ./operator/appupgrade -run TestDecideNeverWritesBeforeDependenciesRolled)",
						wr.Component, d, w.image[d], w.state[d], w.seed)
				}
			}
		}
		w.image[wr.Component], w.state[wr.Component] = wr.Image, rollout.Progressing
		w.writes = append(w.writes, wr.Component)
	}
	st := &w.u.Status
	st.Phase, st.Message, st.ObservedGeneration = p.Phase, p.Message, w.u.Generation
	st.Components = nil
	for _, c := range p.Components {
		st.Components = append(st.Components, v1beta1.ComponentStatus{Name: c.Name, Wave: c.Wave, Phase: c.Phase, Message: c.Message})
	}
	return p
}

func (w *world) phase(name string) v1beta1.ComponentPhase { return phaseOf(w.u.Status, name) }

// TestDecideChainOfTwoWalksTheV1alpha1Phases: the seed's worker → API
// upgrade takes exactly the v1alpha1 steps, one per pass.
func TestDecideChainOfTwoWalksTheV1alpha1Phases(t *testing.T) {
	w := newWorld(comp("worker", "job-worker"), comp("api", "job-api", "worker"))
	type snap struct{ up, worker, api string }
	var got []snap
	rec := func() {
		got = append(got, snap{string(w.u.Status.Phase), string(w.phase("worker")), string(w.phase("api"))})
	}
	w.pass(t)
	rec()
	w.pass(t)
	rec()
	w.pass(t) // writes the worker
	rec()
	w.pass(t) // still rolling
	rec()
	w.state["worker"] = rollout.Rolled
	w.pass(t)
	rec()
	w.pass(t) // writes the API
	rec()
	w.state["api"] = rollout.Rolled
	w.pass(t)
	rec()
	require.Equal(t, []snap{
		{"Pending", "Pending", "Pending"},
		{"Progressing", "Upgrading", "Pending"},
		{"Progressing", "RollingOut", "Pending"},
		{"Progressing", "RollingOut", "Pending"},
		{"Progressing", "Rolled", "Upgrading"},
		{"Progressing", "Rolled", "RollingOut"},
		{"Completed", "Rolled", "Rolled"},
	}, got)
	require.Equal(t, []string{"worker", "api"}, w.writes)
}

// TestDecideWideWaveWritesAllInOnePass: ten independent components are all
// written in the same pass.
func TestDecideWideWaveWritesAllInOnePass(t *testing.T) {
	var cs []v1beta1.Component
	for i := range 10 {
		cs = append(cs, comp(fmt.Sprintf("c%d", i), fmt.Sprintf("d%d", i)))
	}
	w := newWorld(cs...)
	w.pass(t)
	w.pass(t)
	p := w.pass(t)
	require.Len(t, p.Writes, 10)
}

// TestDecideFailureBlocksOnlyDependents: in the diamond db ← {worker,
// indexer} ← api plus an independent "mail", a failed indexer blocks api
// only; worker and mail still roll out; then the upgrade is Failed.
func TestDecideFailureBlocksOnlyDependents(t *testing.T) {
	w := newWorld(comp("db", "db"), comp("worker", "w", "db"), comp("indexer", "i", "db"), comp("api", "a", "worker", "indexer"), comp("mail", "m"))
	for range 3 {
		w.pass(t)
	}
	w.state["db"] = rollout.Failed
	w.state["db"] = rollout.Rolled
	w.state["mail"] = rollout.Rolled
	w.pass(t)
	w.pass(t) // writes worker and indexer
	w.state["indexer"] = rollout.Failed
	w.pass(t)
	require.Equal(t, v1beta1.ComponentFailed, w.phase("indexer"))
	require.Equal(t, v1beta1.ComponentBlocked, w.phase("api"))
	require.Equal(t, v1beta1.PhaseProgressing, w.u.Status.Phase, "worker is still rolling out")
	w.state["worker"] = rollout.Rolled
	w.pass(t)
	require.Equal(t, v1beta1.ComponentRolled, w.phase("worker"))
	require.Equal(t, v1beta1.PhaseFailed, w.u.Status.Phase)
	require.NotContains(t, w.writes, "api")
	require.Contains(t, w.u.Status.Message, "indexer")
}

// TestDecideRevalidatesDependenciesBeforeWriting: a dependency that stops
// being rolled out between passes sends the dependent back to Pending
// without a write.
func TestDecideRevalidatesDependenciesBeforeWriting(t *testing.T) {
	w := newWorld(comp("worker", "w"), comp("api", "a", "worker"))
	for range 3 {
		w.pass(t)
	}
	w.state["worker"] = rollout.Rolled
	w.pass(t)
	require.Equal(t, v1beta1.ComponentUpgrading, w.phase("api"))
	w.state["worker"] = rollout.Progressing // e.g. someone scaled it or a pod was evicted mid-way
	p := w.pass(t)
	require.Empty(t, p.Writes)
	require.Equal(t, v1beta1.ComponentPending, w.phase("api"))
	require.Equal(t, v1beta1.ComponentRollingOut, w.phase("worker"))
}

// TestDecideRefusesAnInvalidGraph: a cycle fails the upgrade at once,
// naming it, and nothing is written.
func TestDecideRefusesAnInvalidGraph(t *testing.T) {
	w := newWorld(comp("a", "a", "b"), comp("b", "b", "a"))
	p := w.pass(t)
	require.Equal(t, v1beta1.PhaseFailed, p.Phase)
	require.Contains(t, p.Message, "a → b → a")
	require.Empty(t, p.Writes)
}

// TestDecideNeverWritesBeforeDependenciesRolled drives 500 random graphs
// (seeded) with random rollout outcomes; pass() fails the test if any
// write happens while a dependency is not at its target and Rolled.
func TestDecideNeverWritesBeforeDependenciesRolled(t *testing.T) {
	for seed := uint64(1); seed <= 500; seed++ {
		r := rand.New(rand.NewPCG(seed, 0))
		n := 1 + r.IntN(7)
		var cs []v1beta1.Component
		for i := range n {
			var deps []string
			for j := range i {
				if r.IntN(3) == 0 {
					deps = append(deps, fmt.Sprintf("c%d", j))
				}
			}
			cs = append(cs, comp(fmt.Sprintf("c%d", i), fmt.Sprintf("d%d", i), deps...))
		}
		w := newWorld(cs...)
		for pass := 0; pass < 200 && !w.u.Status.Phase.Terminal(); pass++ {
			for name, s := range w.state {
				switch x := r.IntN(10); {
				case s == rollout.Progressing && x < 4:
					w.state[name] = rollout.Rolled
				case s == rollout.Progressing && x == 4 && r.IntN(5) == 0:
					w.state[name] = rollout.Failed
				case s == rollout.Rolled && x == 9:
					w.state[name] = rollout.Progressing // a disturbance
				}
			}
			w.seed = seed
			w.pass(t)
		}
		require.Truef(t, w.u.Status.Phase.Terminal(), "seed %d: not terminal after 200 passes: %s", seed, w.u.Status.Message)
	}
}
