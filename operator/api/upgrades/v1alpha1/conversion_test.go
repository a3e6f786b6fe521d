package v1alpha1

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/randfill"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// filler makes random objects shaped as the API server would hold them:
// times to the second (they are serialized as RFC 3339), phases from the
// enums or empty, component names unique.
func filler(seed int64) *randfill.Filler {
	alphaPhases := []Phase{"", PhasePending, PhaseUpgradingWorkers, PhaseWaitingForWorkers, PhaseUpgradingAPI, PhaseWaitingForAPI, PhaseCompleted, PhaseFailed}
	betaPhases := []v1beta1.Phase{"", v1beta1.PhasePending, v1beta1.PhaseProgressing, v1beta1.PhaseCompleted, v1beta1.PhaseFailed}
	compPhases := []v1beta1.ComponentPhase{"", v1beta1.ComponentPending, v1beta1.ComponentUpgrading, v1beta1.ComponentRollingOut, v1beta1.ComponentRolled, v1beta1.ComponentFailed, v1beta1.ComponentBlocked}
	return randfill.NewWithSeed(seed).NilChance(0.2).NumElements(0, 5).Funcs(
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.NewTime(time.Unix(c.Int63n(4e9), 0).UTC())
		},
		func(p *Phase, c randfill.Continue) { *p = alphaPhases[c.Intn(len(alphaPhases))] },
		func(p *v1beta1.Phase, c randfill.Continue) { *p = betaPhases[c.Intn(len(betaPhases))] },
		func(p *v1beta1.ComponentPhase, c randfill.Continue) { *p = compPhases[c.Intn(len(compPhases))] },
		func(s *v1beta1.ApplicationUpgradeSpec, c randfill.Continue) {
			n := c.Intn(5)
			s.Components = nil
			for i := 0; i < n; i++ {
				var comp v1beta1.Component
				c.Fill(&comp)
				comp.Name = fmt.Sprintf("c%d", i)
				comp.DependsOn = nil
				for j := 0; j < i; j++ {
					if c.Bool() {
						comp.DependsOn = append(comp.DependsOn, fmt.Sprintf("c%d", j))
					}
				}
				s.Components = append(s.Components, comp)
			}
			if n == 2 && c.Bool() { // the v1alpha1 shape, often
				s.Components[0].DependsOn, s.Components[1].DependsOn = []string{"c1"}, nil
			}
		},
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			m.Name, m.Namespace = c.String(8), c.String(8)
			m.Generation = c.Int63()
			if c.Bool() {
				m.Annotations = map[string]string{"team": c.String(5)}
			}
		},
	)
}

// viaJSON serializes and parses obj as the API server does between the
// conversion webhook and storage.
func viaJSON[T any](t *testing.T, obj *T) *T {
	t.Helper()
	b, err := json.Marshal(obj)
	require.NoError(t, err)
	var out T
	require.NoError(t, json.Unmarshal(b, &out))
	return &out
}

// TestConversionRoundTripFromV1alpha1 fills 2,000 random v1alpha1 upgrades
// and converts each to v1beta1 and back: nothing may be lost.
func TestConversionRoundTripFromV1alpha1(t *testing.T) {
	for seed := int64(1); seed <= 2000; seed++ {
		var in ApplicationUpgrade
		filler(seed).Fill(&in)
		in.TypeMeta = metav1.TypeMeta{}
		var hub v1beta1.ApplicationUpgrade
		require.NoError(t, in.ConvertTo(&hub))
		var out ApplicationUpgrade
		require.NoError(t, out.ConvertFrom(viaJSON(t, &hub)))
		if !equality.Semantic.DeepEqual(viaJSON(t, &in), viaJSON(t, &out)) {
			t.Fatalf("seed %d: v1alpha1 → v1beta1 → v1alpha1 lost data\nin:  %+v\nout: %+v\nreplay: go test ./operator/api/upgrades/v1alpha1 -run TestConversionRoundTripFromV1alpha1", seed, in, out)
		}
	}
}

// TestConversionRoundTripFromV1beta1 fills 2,000 random v1beta1 upgrades
// (graphs of 0–4 components, any status) and converts each to v1alpha1 and
// back: the annotation carries what v1alpha1 cannot say, so nothing is lost.
func TestConversionRoundTripFromV1beta1(t *testing.T) {
	for seed := int64(1); seed <= 2000; seed++ {
		var in v1beta1.ApplicationUpgrade
		filler(seed).Fill(&in)
		in.TypeMeta = metav1.TypeMeta{}
		in = *viaJSON(t, &in)
		var spoke ApplicationUpgrade
		require.NoError(t, spoke.ConvertFrom(&in))
		var out v1beta1.ApplicationUpgrade
		require.NoError(t, viaJSON(t, &spoke).ConvertTo(&out))
		if !equality.Semantic.DeepEqual(&in, viaJSON(t, &out)) {
			t.Fatalf("seed %d: v1beta1 → v1alpha1 → v1beta1 lost data\nin:  %+v\nout: %+v\nreplay: go test ./operator/api/upgrades/v1alpha1 -run TestConversionRoundTripFromV1beta1", seed, in, out)
		}
	}
}

// TestPhaseFromHubIsConvertFromsPhase: over random v1beta1 upgrades (every
// graph shape, every phase), PhaseFromHub is the phase ConvertFrom writes.
func TestPhaseFromHubIsConvertFromsPhase(t *testing.T) {
	for seed := int64(1); seed <= 2000; seed++ {
		var in v1beta1.ApplicationUpgrade
		filler(seed).Fill(&in)
		var spoke ApplicationUpgrade
		require.NoError(t, spoke.ConvertFrom(in.DeepCopy()))
		if got := PhaseFromHub(&in); got != spoke.Status.Phase {
			t.Fatalf("seed %d: PhaseFromHub %q, ConvertFrom's phase %q (replay: go test ./operator/api/upgrades/v1alpha1 -run TestPhaseFromHubIsConvertFromsPhase)", seed, got, spoke.Status.Phase)
		}
	}
}

// TestConversionOfTheSeedShapeNeedsNoAnnotation: a v1beta1 "api depends on
// worker" graph with v1alpha1-derivable status converts to a plain v1alpha1
// object, and every v1alpha1 phase maps to component phases and back.
func TestConversionOfTheSeedShapeNeedsNoAnnotation(t *testing.T) {
	for _, p := range []Phase{PhasePending, PhaseUpgradingWorkers, PhaseWaitingForWorkers, PhaseUpgradingAPI, PhaseWaitingForAPI, PhaseCompleted, PhaseFailed} {
		in := ApplicationUpgrade{
			ObjectMeta: metav1.ObjectMeta{Name: "job-system", Namespace: "demo"},
			Spec: ApplicationUpgradeSpec{
				Worker: ComponentSpec{DeploymentRef: DeploymentReference{Name: "job-worker"}, Image: "job-worker:v2"},
				API:    ComponentSpec{DeploymentRef: DeploymentReference{Name: "job-api"}, Image: "job-api:v2"},
			},
			Status: ApplicationUpgradeStatus{Phase: p, Worker: ComponentStatus{Image: "job-worker:v2", ShortImage: "job-worker:v2"}},
		}
		var hub v1beta1.ApplicationUpgrade
		require.NoError(t, in.ConvertTo(&hub))
		require.Len(t, hub.Spec.Components, 2)
		require.Equal(t, []string{WorkerComponent}, hub.Spec.Components[1].DependsOn)
		var out ApplicationUpgrade
		require.NoError(t, out.ConvertFrom(&hub))
		require.Empty(t, out.Annotations, "phase %s", p)
		require.Equal(t, p, out.Status.Phase)
	}
}

// A v1alpha1 client never sees Completed while the upgrade is not: a graph
// still Progressing whose worker and API are Rolled (another component
// still rolling out, found by the graph-wide fault runs) reads
// WaitingForAPI.
func TestProgressingGraphIsNeverCompletedForV1alpha1(t *testing.T) {
	if got := PhaseOf(v1beta1.PhaseProgressing, v1beta1.ComponentRolled, v1beta1.ComponentRolled); got != PhaseWaitingForAPI {
		t.Fatalf("PhaseOf(Progressing, Rolled, Rolled) = %s, want %s", got, PhaseWaitingForAPI)
	}
}
