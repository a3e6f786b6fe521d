package plan

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// FuzzCompute plans between random points of a random catalog and checks
// every plan Compute returns: it ends at the target, never repeats a step,
// and every step is allowed from the state before it. Compute must also be
// deterministic and must never panic.
func FuzzCompute(f *testing.F) {
	for _, s := range []struct {
		seed   uint64
		shape  uint8
		duplex bool
	}{{1, 0, true}, {2, 1, false}, {3, 2, true}, {42, 3, true}, {7, 255, false}, {1234567, 17, true}} {
		f.Add(s.seed, s.shape, s.duplex)
	}
	f.Fuzz(func(t *testing.T, seed uint64, shape uint8, duplex bool) {
		r := rand.New(rand.NewPCG(seed, uint64(shape)))
		cat, from, to := randomWorld(r, shape)
		mode := Simplex
		if duplex {
			mode = Duplex
		}
		steps, err := Compute(from, to, cat, mode)
		again, err2 := Compute(from, to, cat, mode)
		if fmt.Sprint(err) != fmt.Sprint(err2) || !reflect.DeepEqual(steps, again) {
			t.Fatalf("Compute is not deterministic: %v / %v, %v / %v", steps, again, err, err2)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		for i, s := range steps {
			if s.Reason == "" {
				t.Fatalf("step %d %s has no reason", i, s)
			}
		}
		assertValidPlan(t, from, to, steps, cat, mode)
	})
}

// randomWorld builds a catalog of up to three majors with a few patches
// each and Kubernetes v1.30–v1.38, with random states, requirements,
// supported ranges and upgrade_from lists; from is a deployed point, to a
// random product release with a random (or no) Kubernetes version.
func randomWorld(r *rand.Rand, shape uint8) (release.Catalog, release.Composite, release.Composite) {
	var cat release.Catalog
	kubeStates := []release.KubeState{release.KubeAvailable, release.KubeAvailable, release.KubeAvailable, release.KubeAvailable, release.KubeUnavailable, release.KubePartial}
	var prev release.KubeVersion
	for minor := uint64(30); minor <= 38; minor++ {
		for patch := uint64(0); patch < 1+uint64(r.IntN(2)); patch++ {
			v := release.MustParseKubeVersion(fmt.Sprintf("v1.%d.%d", minor, patch*3))
			k := release.Kube{Version: v, State: kubeStates[r.IntN(len(kubeStates))]}
			if !prev.IsZero() && r.IntN(3) > 0 {
				k.UpgradeFrom = []release.KubeVersion{prev}
			}
			cat.Kubes = append(cat.Kubes, k)
			prev = v
		}
	}
	majors := []string{"13.01", "27.03", "40.05"}[:1+int(shape%3)]
	supports := map[string][]release.KubeVersion{}
	prodStates := []release.ProductState{release.ProductAvailable, release.ProductAvailable, release.ProductUnavailable, release.ProductUploadFailed, release.ProductDeploying}
	var all []release.ID
	for mi, m := range majors {
		lo := 30 + 2*mi + r.IntN(2)
		for p := 0; p < 1+r.IntN(4); p++ {
			id := release.MustParseID(fmt.Sprintf("starlingx-%s.%d", m, p))
			prod := release.Product{ID: id, State: prodStates[r.IntN(len(prodStates))]}
			for _, k := range cat.Kubes {
				if int(k.Version.Minor) >= lo && int(k.Version.Minor) <= lo+2+p%2 {
					supports[id.String()] = append(supports[id.String()], k.Version)
				}
			}
			if len(all) > 0 && r.IntN(4) > 0 {
				prod.Requires = []release.ID{all[r.IntN(len(all))]}
			}
			cat.Products = append(cat.Products, prod)
			all = append(all, id)
		}
	}
	cur := cat.Products[r.IntN(len(cat.Products))]
	for i := range cat.Products {
		if cat.Products[i].ID.Compare(cur.ID) <= 0 && cat.Products[i].ID.SameMajor(cur.ID) {
			cat.Products[i].State = release.ProductDeployed
		}
	}
	from := release.Composite{Platform: cur.ID, Kubernetes: cat.Kubes[r.IntN(len(cat.Kubes))].Version}
	if k := supports[cur.ID.String()]; len(k) > 0 && r.IntN(4) > 0 {
		from.Kubernetes = k[r.IntN(len(k))]
	}
	to := randomTarget(r, cat, all, from)
	// sysinv lists the running release's versions only (most of the time;
	// sometimes everything, to exercise the version checks).
	cat.KubesOf = cur.ID
	if k := supports[cur.ID.String()]; r.IntN(4) > 0 {
		var listed []release.Kube
		for _, kube := range cat.Kubes {
			if kube.Version == from.Kubernetes || containsKube(k, kube.Version) {
				listed = append(listed, kube)
			}
		}
		cat.Kubes = listed
	}
	return cat, from, to
}

// randomTarget mostly picks a target not behind from (so most plans
// exist), sometimes anything, sometimes without Kubernetes.
func randomTarget(r *rand.Rand, cat release.Catalog, all []release.ID, from release.Composite) release.Composite {
	to := release.Composite{Platform: all[r.IntN(len(all))]}
	for i := 0; i < 4 && to.Platform.Compare(from.Platform) < 0; i++ {
		to.Platform = all[r.IntN(len(all))]
	}
	if r.IntN(5) == 0 {
		return to
	}
	to.Kubernetes = cat.Kubes[r.IntN(len(cat.Kubes))].Version
	for i := 0; i < 4 && to.Kubernetes.Compare(from.Kubernetes) < 0; i++ {
		to.Kubernetes = cat.Kubes[r.IntN(len(cat.Kubes))].Version
	}
	return to
}

func containsKube(vs []release.KubeVersion, v release.KubeVersion) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}
