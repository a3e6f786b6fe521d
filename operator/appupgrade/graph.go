package appupgrade

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// CycleError is a dependency cycle in spec.components, as the path that
// closes it: [a b c a] means a depends on b, b on c and c on a.
type CycleError struct{ Path []string }

func (e *CycleError) Error() string {
	return "spec.components has a dependency cycle " + strings.Join(e.Path, " → ") + ": remove one of these dependsOn entries"
}

// Waves returns each component's wave: 0 without dependencies, otherwise one
// more than its deepest dependency. Errors: an unknown dependsOn name, or a
// *CycleError naming the first cycle found (components visited in spec order).
func Waves(cs []v1beta1.Component) (map[string]int32, error) {
	byName := make(map[string]*v1beta1.Component, len(cs))
	for i := range cs {
		byName[cs[i].Name] = &cs[i]
	}
	waves := make(map[string]int32, len(cs))
	const visiting = -1
	var path []string
	var visit func(name string) error
	visit = func(name string) error {
		if w, seen := waves[name]; seen {
			if w == visiting {
				start := slices.Index(path, name)
				return &CycleError{Path: append(slices.Clone(path[start:]), name)}
			}
			return nil
		}
		waves[name] = visiting
		path = append(path, name)
		wave := int32(0)
		for _, d := range byName[name].DependsOn {
			if _, ok := byName[d]; !ok {
				return fmt.Errorf("spec.components[%s].dependsOn names %q, which is not a component: fix the name or add the component", name, d)
			}
			if err := visit(d); err != nil {
				return err
			}
			wave = max(wave, waves[d]+1)
		}
		path = path[:len(path)-1]
		waves[name] = wave
		return nil
	}
	for i := range cs {
		if err := visit(cs[i].Name); err != nil {
			return nil, err
		}
	}
	return waves, nil
}

// Validate returns every problem of u's component graph that the CRD's
// schema cannot catch on its own or that only the full picture shows:
// duplicate or empty names, self-dependencies, unknown dependsOn names,
// cycles (named), the same workload twice (an empty namespace meaning
// u's own), a component naming its workload with both or neither of
// deploymentRef and workloadRef, or with an unknown kind, and an image
// that is not a valid reference (ValidateImage). Messages say what to
// fix. Nil means the graph is usable.
func Validate(u *v1beta1.ApplicationUpgrade) []error {
	var errs []error
	cs := u.Spec.Components
	if len(cs) == 0 {
		return []error{fmt.Errorf("spec.components is empty: list at least one component")}
	}
	names := map[string]bool{}
	deployments := map[string]string{}
	for _, c := range cs {
		if names[c.Name] {
			errs = append(errs, fmt.Errorf("spec.components has two components named %q: names must be unique", c.Name))
		}
		names[c.Name] = true
		if slices.Contains(c.DependsOn, c.Name) {
			errs = append(errs, fmt.Errorf("spec.components[%s] depends on itself: remove %q from its dependsOn", c.Name, c.Name))
		}
		if err := ValidateRef(c); err != nil {
			errs = append(errs, err)
		}
		w := c.Workload(u.Namespace)
		key := w.IndexKey()
		if other, dup := deployments[key]; dup {
			errs = append(errs, fmt.Errorf("spec.components[%s] and spec.components[%s] both reference %s: each %s may appear once", other, c.Name, w, w.Kind))
		}
		deployments[key] = c.Name
		if err := ValidateImage(c.Image); err != nil {
			errs = append(errs, fmt.Errorf("spec.components[%s].image: %w", c.Name, err))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if _, err := Waves(cs); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// ValidateRef checks that c names its workload with exactly one of
// deploymentRef and workloadRef, and a supported kind (the CRD's schema
// says the same; this holds for objects that reach the operator without
// it, as in the simulator).
func ValidateRef(c v1beta1.Component) error {
	hasDeployment := c.DeploymentRef != (v1beta1.DeploymentReference{})
	switch {
	case hasDeployment && c.WorkloadRef != nil:
		return fmt.Errorf("spec.components[%s] sets both deploymentRef and workloadRef: keep exactly one (workloadRef with kind Deployment names a Deployment too)", c.Name)
	case !hasDeployment && c.WorkloadRef == nil:
		return fmt.Errorf("spec.components[%s] names no workload: set deploymentRef.name, or workloadRef with kind (Deployment, StatefulSet or DaemonSet) and name", c.Name)
	case c.WorkloadRef != nil && c.WorkloadRef.Kind.Resource() == "":
		return fmt.Errorf("spec.components[%s].workloadRef.kind is %q: use Deployment, StatefulSet or DaemonSet", c.Name, SafeText(string(c.WorkloadRef.Kind), 63))
	case c.WorkloadName() == "":
		return fmt.Errorf("spec.components[%s].%s.name is empty: name the workload", c.Name, c.RefField())
	}
	return nil
}

// CrossNamespaceFlag is the manager flag that allows a component's
// Deployment to be in another namespace than its ApplicationUpgrade.
const CrossNamespaceFlag = "--allow-cross-namespace-refs"

// CrossNamespaceRefs returns one error per component of u whose workload
// is in another namespace than u, naming the flag that would allow it —
// the refusal when cross-namespace references are off (the default, as
// Flux's --no-cross-namespace-refs lockdown: fluxcd/pkg runtime/acl). The
// Deployment is not read to decide this, so the refusal discloses nothing
// about the other namespace.
func CrossNamespaceRefs(u *v1beta1.ApplicationUpgrade) []error {
	var errs []error
	for _, c := range u.Spec.Components {
		if ns := c.DeploymentNamespace(u.Namespace); ns != u.Namespace {
			errs = append(errs, CrossNamespaceError(u, c))
		}
	}
	return errs
}

// CrossNamespaceError is the refusal of component c of u referencing a
// workload outside u's namespace while cross-namespace references are off.
func CrossNamespaceError(u *v1beta1.ApplicationUpgrade, c v1beta1.Component) error {
	return fmt.Errorf("spec.components[%s].%s.namespace is %q, not the upgrade's namespace %q: cross-namespace references are disabled (the operator runs without %s); remove the namespace or create the ApplicationUpgrade in %q",
		c.Name, c.RefField(), c.RefNamespace(), u.Namespace, CrossNamespaceFlag, c.RefNamespace())
}
