package v1alpha1

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// AlphaWriteError judges a create or update made through v1alpha1, given
// the stored object before it (old, nil on create) and the v1beta1 object
// the conversion produced (u). A v1alpha1 write can only say what
// v1alpha1 shows, so its result must be:
//   - on create, the plain graph "api depends on worker" (a graph means a
//     conversion annotation was set by hand);
//   - on update, old's graph with v1alpha1's worker and api fields merged
//     into its first and last components in upgrade order (MergeSpec) —
//     anything else means the conversion annotation was dropped or altered,
//     or the edit cannot be represented (a one-component graph given two
//     different components).
//
// It returns nil, or one error naming the object and saying to keep the
// annotation or use v1beta1. Pure; the admission webhook and the
// simulator's admission call it for requests whose version is v1alpha1.
func AlphaWriteError(old, u *v1beta1.ApplicationUpgrade) error {
	if _, kept := u.Annotations[ConversionDataAnnotation]; kept {
		// ConvertTo consumes every record ConvertFrom wrote; one left is
		// not such a record.
		return fmt.Errorf("applicationupgrade %s/%s: the %s annotation is not a conversion record this operator wrote (not a JSON object of its spec and status alone): remove it, or write the graph with upgrades.lunadas.dev/v1beta1",
			u.Namespace, u.Name, ConversionDataAnnotation)
	}
	view := specFromHub(u.Spec)
	if old == nil {
		if want := specToHub(view); !equality.Semantic.DeepEqual(want, u.Spec) {
			return fmt.Errorf("applicationupgrade %s/%s: a v1alpha1 create cannot set the %s annotation (it would make the graph %s): remove the annotation, or create the graph with upgrades.lunadas.dev/v1beta1",
				u.Namespace, u.Name, ConversionDataAnnotation, describeGraph(u.Spec))
		}
		return nil
	}
	want := old.Spec
	if !equality.Semantic.DeepEqual(specFromHub(old.Spec), view) {
		want = MergeSpec(old.Spec, view)
	}
	if !sameShape(want, old.Spec) {
		return fmt.Errorf("applicationupgrade %s/%s: this v1alpha1 write cannot be represented on the graph %s (v1alpha1 shows its only component as both worker and api, and they now differ): make the change with upgrades.lunadas.dev/v1beta1",
			u.Namespace, u.Name, describeGraph(old.Spec))
	}
	if !equality.Semantic.DeepEqual(want, u.Spec) {
		return fmt.Errorf("applicationupgrade %s/%s: this v1alpha1 write would change the graph from %s to %s, which v1alpha1 cannot express (v1alpha1 shows only the first and last components in upgrade order; the rest travel in the %s annotation): keep that annotation unchanged, or make the change with upgrades.lunadas.dev/v1beta1",
			u.Namespace, u.Name, describeGraph(old.Spec), describeGraph(u.Spec), ConversionDataAnnotation)
	}
	return nil
}

// describeGraph renders components as "name(image) <- dependency, ..." for
// error messages, e.g. "db(db:v2), api(api:v2) <- db"; a workload that is
// not a Deployment shows its kind: "db(StatefulSet db:v2)".
func describeGraph(s v1beta1.ApplicationUpgradeSpec) string {
	parts := make([]string, 0, len(s.Components))
	for _, c := range s.Components {
		kind := ""
		if k := c.Kind(); k != v1beta1.KindDeployment {
			kind = string(k) + " "
		}
		p := c.Name + "(" + kind + c.Image + ")"
		if len(c.DependsOn) > 0 {
			p += " <- " + strings.Join(c.DependsOn, " ")
		}
		parts = append(parts, p)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// sameShape reports whether a and b have the same components (names, in
// order) and the same edges.
func sameShape(a, b v1beta1.ApplicationUpgradeSpec) bool {
	if len(a.Components) != len(b.Components) {
		return false
	}
	for i := range a.Components {
		x, y := a.Components[i], b.Components[i]
		if x.Name != y.Name || !equality.Semantic.DeepEqual(x.DependsOn, y.DependsOn) {
			return false
		}
	}
	return true
}
