package judge

import (
	"fmt"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
)

// Edge is one dependency edge of a v1beta1 upgrade's graph: component
// Dependent depends on component Dependency, so Dependent's image must not
// be written while an old pod of Dependency exists. Pair holds their
// workloads (Deployments, StatefulSets, DaemonSets) as Ordering reads
// them: Worker is the dependency's (the callee), API the dependent's (the
// caller).
type Edge struct {
	Dependency, Dependent string
	Pair
	// Unchecked, when not empty, says why Ordering cannot judge the edge
	// (its Deployments are in two namespaces; Ordering reads one).
	Unchecked string
}

// EdgeReport is Ordering's Report on one Edge.
type EdgeReport struct {
	Edge
	Report
}

// Edges lists u's dependency edges: dependents in spec order, each with
// its dependsOn entries in their order. An entry naming no component is
// skipped (admission refuses it).
func Edges(u *v1beta1.ApplicationUpgrade) []Edge {
	byName := map[string]*v1beta1.Component{}
	for i := range u.Spec.Components {
		byName[u.Spec.Components[i].Name] = &u.Spec.Components[i]
	}
	var out []Edge
	for i := range u.Spec.Components {
		c := &u.Spec.Components[i]
		for _, d := range c.DependsOn {
			dep, ok := byName[d]
			if !ok {
				continue
			}
			e := Edge{Dependency: d, Dependent: c.Name, Pair: Pair{Namespace: c.WorkloadNamespace(u.Namespace),
				Worker: dep.WorkloadName(), API: c.WorkloadName(), WorkerKind: kindOf(string(dep.Kind())), APIKind: kindOf(string(c.Kind()))}}
			if ns := dep.WorkloadNamespace(u.Namespace); ns != e.Namespace {
				e.WorkerNamespace = ns
			}
			out = append(out, e)
		}
	}
	return out
}

// GraphOrdering is Ordering on every edge of u's graph (Edges), in order,
// cross-namespace edges included.
func GraphOrdering(events []eventlog.Event, u *v1beta1.ApplicationUpgrade) []EdgeReport {
	edges := Edges(u)
	out := make([]EdgeReport, len(edges))
	ordered := Ordered(events)
	for i, e := range edges {
		out[i].Edge = e
		out[i].Report = Ordering(ordered, e.Pair)
	}
	return out
}

// Combine folds edge reports into the one Report of the upgrade that
// Verdict and the fault runs read: every edge's violations, each prefixed
// with its edge ("db → worker: ..."); APIWrites and WorkerWrites summed
// over the edges (a dependent of two dependencies counts twice). Handoff
// and its times are -1: they belong to an edge (see the EdgeReports).
func Combine(reps []EdgeReport) Report {
	out := Report{WorkerWrites: map[string]int{}, Handoff: -1, LastOldWorkerDeleted: -1, FirstAPIWrite: -1}
	for _, r := range reps {
		for _, v := range r.Violations {
			out.Violations = append(out.Violations, fmt.Sprintf("%s → %s: %s", r.Dependency, r.Dependent, v))
		}
		out.APIWrites += r.APIWrites
		for img, n := range r.WorkerWrites {
			out.WorkerWrites[img] += n
		}
	}
	return out
}
