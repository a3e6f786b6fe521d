package v1alpha1_test

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

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

var propertySeed = flag.Uint64("property.seed", 1, "seed of TestPropertyMixedVersionWritesNeverLoseData (and its envtest twin)")

// graphStore holds ApplicationUpgrades stored at v1beta1 and serves them
// in both versions: memStore in-process, apiStore (envtest) on a real
// kube-apiserver with the product's conversion and admission webhooks.
// A refused write must leave the stored object unchanged.
type graphStore interface {
	// create stores a new upgrade named name with spec.
	create(t *testing.T, name string, spec v1beta1.ApplicationUpgradeSpec)
	readAlpha(t *testing.T, name string) *v1alpha1.ApplicationUpgrade
	// writeAlpha is a v1alpha1 update (kubectl edit / apply).
	writeAlpha(t *testing.T, a *v1alpha1.ApplicationUpgrade) error
	// patchAlphaImage is `kubectl patch --type merge` of
	// spec.<role>.image through v1alpha1 (role "worker" or "api").
	patchAlphaImage(t *testing.T, name, role, image string) error
	readBeta(t *testing.T, name string) *v1beta1.ApplicationUpgrade
	writeBeta(t *testing.T, u *v1beta1.ApplicationUpgrade) error
}

// memStore is an in-process stand-in for the API server: v1alpha1 reads
// are ConvertFrom through JSON, v1alpha1 writes are ConvertTo then
// admission (AlphaWriteError).
type memStore struct {
	objs map[string]*v1beta1.ApplicationUpgrade
}

func (s *memStore) create(_ *testing.T, name string, spec v1beta1.ApplicationUpgradeSpec) {
	s.objs[name] = &v1beta1.ApplicationUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: 1}, Spec: spec}
}

func (s *memStore) readAlpha(t *testing.T, name string) *v1alpha1.ApplicationUpgrade {
	a := &v1alpha1.ApplicationUpgrade{}
	require.NoError(t, a.ConvertFrom(s.objs[name].DeepCopy()))
	return roundTripJSON(t, a)
}

func (s *memStore) writeAlpha(t *testing.T, a *v1alpha1.ApplicationUpgrade) error {
	hub := &v1beta1.ApplicationUpgrade{}
	require.NoError(t, roundTripJSON(t, a).ConvertTo(hub))
	if err := v1alpha1.AlphaWriteError(s.objs[a.Name], hub); err != nil {
		return err
	}
	s.objs[a.Name] = roundTripJSON(t, hub)
	return nil
}

func (s *memStore) patchAlphaImage(t *testing.T, name, role, image string) error {
	a := s.readAlpha(t, name)
	if role == "worker" {
		a.Spec.Worker.Image = image
	} else {
		a.Spec.API.Image = image
	}
	return s.writeAlpha(t, a)
}

func (s *memStore) readBeta(_ *testing.T, name string) *v1beta1.ApplicationUpgrade {
	return s.objs[name].DeepCopy()
}

func (s *memStore) writeBeta(_ *testing.T, u *v1beta1.ApplicationUpgrade) error {
	s.objs[u.Name] = u.DeepCopy()
	return nil
}

func roundTripJSON[T any](t *testing.T, in *T) *T {
	b, err := json.Marshal(in)
	require.NoError(t, err)
	out := new(T)
	require.NoError(t, json.Unmarshal(b, out))
	return out
}

// randomGraph is 1–6 components c0..cN on Deployments <prefix>-d0..dN
// (distinct per upgrade, so the overlap guard has nothing to refuse), each
// depending on a random subset of earlier ones, in shuffled spec order,
// some in another namespace.
func randomGraph(r *rand.Rand, prefix string) v1beta1.ApplicationUpgradeSpec {
	n := 1 + r.IntN(6)
	var cs []v1beta1.Component
	for i := range n {
		c := v1beta1.Component{Name: fmt.Sprintf("c%d", i), DeploymentRef: v1beta1.DeploymentReference{Name: fmt.Sprintf("%s-d%d", prefix, i)},
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

// TestPropertyMixedVersionWritesNeverLoseData: 2,000 random sequences of
// 12 v1alpha1 and v1beta1 reads, updates and patches on random graphs,
// in-process (see checkMixedVersionWrites).
func TestPropertyMixedVersionWritesNeverLoseData(t *testing.T) {
	checkMixedVersionWrites(t, &memStore{objs: map[string]*v1beta1.ApplicationUpgrade{}}, *propertySeed, 2000, 12,
		"go test ./operator/api/upgrades/v1alpha1 -run TestPropertyMixedVersionWritesNeverLoseData")
}

// checkMixedVersionWrites runs runs random sequences of steps writes on
// random graphs against s. Every accepted write leaves exactly the expected
// graph (no component, edge or image lost; a v1alpha1 image edit lands on
// the first / last component in upgrade order), and every refused write
// leaves the stored object unchanged. replay is the command that reruns
// the test (-property.seed is appended).
func checkMixedVersionWrites(t *testing.T, s graphStore, seed uint64, runs, steps int, replay string) {
	r := rand.New(rand.NewPCG(seed, 0))
	refused, accepted := 0, 0
	for run := range runs {
		name := fmt.Sprintf("u%d", run)
		spec := randomGraph(r, name)
		s.create(t, name, spec)
		want := *spec.DeepCopy() // the model
		for step := range steps {
			before := s.readBeta(t, name)
			where := fmt.Sprintf("seed %d run %d step %d (replay: %s -property.seed %d)", seed, run, step, replay, seed)
			var err error
			expectRefusal := false
			switch op := r.IntN(7); op {
			case 0, 1, 6: // v1alpha1 edit of the worker or api image: read-modify-write (kubectl edit) or merge patch
				w, api := v1alpha1.Pair(want)
				img := fmt.Sprintf("registry.example.com/x:v%d", r.IntN(100))
				role := "worker"
				if op == 1 || (op == 6 && r.IntN(2) == 0) {
					role = "api"
				}
				a := s.readAlpha(t, name)
				if role == "worker" {
					a.Spec.Worker.Image = img
					want.Components[w].Image = img
				} else {
					a.Spec.API.Image = img
					want.Components[api].Image = img
				}
				if w == api && a.Spec.Worker != a.Spec.API { // one component shown twice, edited once: not representable
					expectRefusal = true
				}
				if op == 6 {
					err = s.patchAlphaImage(t, name, role, img)
				} else {
					err = s.writeAlpha(t, a)
				}
			case 2: // v1alpha1 write that drops the conversion annotation
				a := s.readAlpha(t, name)
				_, had := a.Annotations[v1alpha1.ConversionDataAnnotation]
				delete(a.Annotations, v1alpha1.ConversionDataAnnotation)
				expectRefusal = had && !equality.Semantic.DeepEqual(v1alpha1.SpecToHub(a.Spec), want)
				err = s.writeAlpha(t, a)
			case 3: // v1alpha1 write that alters the annotation (changes one component's image in it)
				a := s.readAlpha(t, name)
				data, had := a.Annotations[v1alpha1.ConversionDataAnnotation]
				if !had {
					continue
				}
				var cd v1alpha1.ConversionData
				require.NoError(t, json.Unmarshal([]byte(data), &cd))
				i := r.IntN(len(cd.Spec.Components))
				cd.Spec.Components[i].Image += "-altered"
				b, _ := json.Marshal(cd)
				a.Annotations[v1alpha1.ConversionDataAnnotation] = string(b)
				// Altering a component v1alpha1 shows is overwritten by the
				// view (harmless); any other is refused.
				w, api := v1alpha1.Pair(want)
				expectRefusal = i != w && i != api
				err = s.writeAlpha(t, a)
			case 4: // v1beta1 update of a random component's image
				i := r.IntN(len(want.Components))
				img := fmt.Sprintf("registry.example.com/y:v%d", r.IntN(100))
				want.Components[i].Image = img
				u := before.DeepCopy()
				u.Spec.Components[i].Image = img
				err = s.writeBeta(t, u)
			case 5: // v1alpha1 read, then written back unchanged
				err = s.writeAlpha(t, s.readAlpha(t, name))
			}
			if expectRefusal {
				require.Error(t, err, where)
				require.Equal(t, before, s.readBeta(t, name), "a refused write changed the stored object: %s", where)
				want = *before.Spec.DeepCopy()
				refused++
				continue
			}
			require.NoError(t, err, where)
			accepted++
			got := s.readBeta(t, name).Spec
			require.True(t, equality.Semantic.DeepEqual(want, got), "stored graph differs from the model at %s:\nwant %s\ngot  %s", where, v1alpha1.DescribeGraph(want), v1alpha1.DescribeGraph(got))
			require.Equal(t, len(spec.Components), len(got.Components), where)
			for _, c := range spec.Components {
				require.True(t, slices.ContainsFunc(got.Components, func(x v1beta1.Component) bool {
					return x.Name == c.Name && slices.Equal(x.DependsOn, c.DependsOn) && x.DeploymentRef == c.DeploymentRef
				}), "component %s or its edges lost at %s", c.Name, where)
			}
		}
	}
	t.Logf("seed %d: %d runs, %d accepted writes, %d refused", seed, runs, accepted, refused)
	require.Greater(t, refused, runs*steps/40, "the sequences exercise refusals")
}
