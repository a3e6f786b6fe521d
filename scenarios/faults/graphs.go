package faults

import (
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// aimed are the faults that act on an upgrade's components (a Deployment
// named by their dep parameter, the upgrade's spec, or the upgrade
// itself): the injector aims them at the worker and API of a v1alpha1
// upgrade only. The others hit the operator's API boundary or process, or
// a node, and apply to any run.
// gitops-revert re-applies a component's Deployment by its dep parameter
// too, so it is aimed.
var aimed = map[Kind]bool{Slow: true, NeverReady: true, CrashLoop: true, BadImage: true, Scale: true, Edit: true, Respec: true, Delete: true,
	GitopsRevert: true}

// RefuseGraphTargets refuses, in one line, a schedule that aims a fault
// at a component of an upgrade given as v1beta1 (a dependency graph):
// such a fault would silently do nothing, and the run would be judged
// "as expected" (issue 17). API, process and node faults pass.
func RefuseGraphTargets(objs []client.Object, faults []Fault) error {
	var graphs []string
	for _, o := range objs {
		if u, ok := o.(*upgradesv1beta1.ApplicationUpgrade); ok {
			graphs = append(graphs, fmt.Sprintf("%s/%s (%d components)", u.Namespace, u.Name, len(u.Spec.Components)))
		}
	}
	if len(graphs) == 0 {
		return nil
	}
	for _, f := range faults {
		if aimed[f.Kind] {
			return fmt.Errorf("fault %s cannot aim at a component of the v1beta1 upgrade %s: the catalog aims it at the worker or API of a v1alpha1 upgrade only; run the graph with the API and process faults (%s)",
				f, strings.Join(graphs, ", "), strings.Join(unaimed(), ", "))
		}
	}
	return nil
}

// unaimed lists the catalog's faults that apply to any upgrade.
func unaimed() []string {
	var out []string
	for _, k := range Kinds() {
		if !aimed[Kind(k)] {
			out = append(out, k)
		}
	}
	return out
}
