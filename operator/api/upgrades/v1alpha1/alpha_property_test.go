package v1alpha1

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

var propertySeed = flag.Uint64("property.seed", 1, "seed of TestPropertyMixedVersionWritesNeverLoseData")

// store is an in-process stand-in for the API server holding one
// ApplicationUpgrade at v1beta1: v1alpha1 reads are ConvertFrom through
// JSON, v1alpha1 writes are ConvertTo then admission (AlphaWriteError);
// a refused write leaves the stored object untouched.
type store struct{ obj *v1beta1.ApplicationUpgrade }

func (s *store) readAlpha(t *testing.T) *ApplicationUpgrade {
	a := &ApplicationUpgrade{}
	require.NoError(t, a.ConvertFrom(s.obj.DeepCopy()))
	return roundTripJSON(t, a)
}

func (s *store) writeAlpha(t *testing.T, a *ApplicationUpgrade) error {
	hub := &v1beta1.ApplicationUpgrade{}
	require.NoError(t, roundTripJSON(t, a).ConvertTo(hub))
	if err := AlphaWriteError(s.obj, hub); err != nil {
		return err
	}
	s.obj = roundTripJSON(t, hub)
	return nil
}

func roundTripJSON[T any](t *testing.T, in *T) *T {
	b, err := json.Marshal(in)
	require.NoError(t, err)
	out := new(T)
	require.NoError(t, json.Unmarshal(b, out))
	return out
}

// randomGraph is 1–6 components c0..cN, each depending on a random subset
// of earlier ones, in shuffled spec order, some in another namespace.
func randomGraph(r *rand.Rand) v1beta1.ApplicationUpgradeSpec {
	n := 1 + r.IntN(6)
	var cs []v1beta1.Component
	for i := range n {
		c := v1beta1.Component{Name: fmt.Sprintf("c%d", i), DeploymentRef: v1beta1.DeploymentReference{Name: fmt.Sprintf("d%d", i)},
			Image: fmt.Sprintf("registry.example.com/c%d:v1", i)}
		if r.IntN(4) == 0 {
			c.DeploymentRef.Namespace = "other"
		}
		for j := range i {
			if r.IntN(2) == 0 {
				c.DependsOn = append(c.DependsOn, fmt.Sprintf("c%d", j))
			}
		}
		cs = append(cs, c)
	}
	r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
	return v1beta1.ApplicationUpgradeSpec{Components: cs}
}

// TestPropertyMixedVersionWritesNeverLoseData: thousands of random
// sequences of v1alpha1 and v1beta1 reads, updates and patch-like edits on
// random graphs. Every accepted write leaves exactly the expected graph
// (no component, edge or image lost; a v1alpha1 image edit lands on the
// first / last component in upgrade order), and every refused write
// leaves the stored object unchanged.
func TestPropertyMixedVersionWritesNeverLoseData(t *testing.T) {
	seed := *propertySeed
	r := rand.New(rand.NewPCG(seed, 0))
	refused, accepted := 0, 0
	for run := range 2000 {
		spec := randomGraph(r)
		s := &store{obj: &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("u%d", run), Generation: 1}, Spec: spec}}
		want := *spec.DeepCopy() // the model
		for step := range 12 {
			before := s.obj.DeepCopy()
			where := fmt.Sprintf("seed %d run %d step %d (replay: go test ./operator/api/upgrades/v1alpha1 -run TestPropertyMixedVersionWritesNeverLoseData -property.seed %d)", seed, run, step, seed)
			var err error
			expectRefusal := false
			switch op := r.IntN(6); op {
			case 0, 1: // v1alpha1 read-modify-write of the worker or api image (kubectl edit / merge patch)
				a := s.readAlpha(t)
				w, api := pair(want)
				img := fmt.Sprintf("registry.example.com/x:v%d", r.IntN(100))
				if op == 0 {
					a.Spec.Worker.Image = img
					want.Components[w].Image = img
				} else {
					a.Spec.API.Image = img
					want.Components[api].Image = img
				}
				if w == api && a.Spec.Worker != a.Spec.API { // one component shown twice, edited once: not representable
					expectRefusal = true
					want = *before.Spec.DeepCopy()
				}
				err = s.writeAlpha(t, a)
			case 2: // v1alpha1 write that drops the conversion annotation
				a := s.readAlpha(t)
				_, had := a.Annotations[ConversionDataAnnotation]
				delete(a.Annotations, ConversionDataAnnotation)
				expectRefusal = had && !equality.Semantic.DeepEqual(specToHub(a.Spec), want)
				err = s.writeAlpha(t, a)
			case 3: // v1alpha1 write that alters the annotation (drops a component from it)
				a := s.readAlpha(t)
				data, had := a.Annotations[ConversionDataAnnotation]
				if !had {
					continue
				}
				var cd conversionData
				require.NoError(t, json.Unmarshal([]byte(data), &cd))
				i := r.IntN(len(cd.Spec.Components))
				cd.Spec.Components[i].Image += "-altered"
				b, _ := json.Marshal(cd)
				a.Annotations[ConversionDataAnnotation] = string(b)
				// Altering a component v1alpha1 shows is overwritten by the
				// view (harmless); any other is refused.
				w, api := pair(want)
				expectRefusal = i != w && i != api
				err = s.writeAlpha(t, a)
			case 4: // v1beta1 update of a random component's image
				i := r.IntN(len(want.Components))
				img := fmt.Sprintf("registry.example.com/y:v%d", r.IntN(100))
				want.Components[i].Image = img
				s.obj.Spec.Components[i].Image = img
			case 5: // v1alpha1 read, then written back unchanged
				err = s.writeAlpha(t, s.readAlpha(t))
			}
			if expectRefusal {
				require.Error(t, err, where)
				require.Equal(t, before, s.obj, "a refused write changed the stored object: %s", where)
				want = *before.Spec.DeepCopy()
				refused++
				continue
			}
			require.NoError(t, err, where)
			accepted++
			require.True(t, equality.Semantic.DeepEqual(want, s.obj.Spec), "stored graph differs from the model at %s:\nwant %s\ngot  %s", where, describeGraph(want), describeGraph(s.obj.Spec))
			require.Equal(t, len(spec.Components), len(s.obj.Spec.Components), where)
			for _, c := range spec.Components {
				require.True(t, slices.ContainsFunc(s.obj.Spec.Components, func(x v1beta1.Component) bool {
					return x.Name == c.Name && slices.Equal(x.DependsOn, c.DependsOn) && x.DeploymentRef == c.DeploymentRef
				}), "component %s or its edges lost at %s", c.Name, where)
			}
		}
	}
	t.Logf("seed %d: %d accepted writes, %d refused", seed, accepted, refused)
	require.Greater(t, refused, 100)
}

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
