package faults

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// aimed are the faults that act on an upgrade's components: a component
// named by their dep parameter (its Deployment, StatefulSet or DaemonSet,
// or its target image), the upgrade's spec (respec), or the upgrade
// itself (delete). The others hit the operator's API boundary or process,
// or a node, and apply to any run.
var aimed = map[Kind]bool{Slow: true, NeverReady: true, CrashLoop: true, BadImage: true, Scale: true, Edit: true, Respec: true, Delete: true,
	GitopsRevert: true}

// component is one component of one upgrade, as a fault aims at it: the
// worker and API of a v1alpha1 upgrade (named "worker" and "api", the API
// depending on the worker), or a v1beta1 component.
type component struct {
	Upgrade types.NamespacedName
	// Graph: the upgrade was given as v1beta1.
	Graph bool
	Name  string
	Kind  upgradesv1beta1.WorkloadKind
	// Workload is the component's Deployment, StatefulSet or DaemonSet.
	Workload types.NamespacedName
	// Container is the container whose image is upgraded ("" for a
	// v1alpha1 component that leaves it out: the template's only one).
	Container string
	// Image is the target image.
	Image     string
	DependsOn []string
}

// label is "component db (statefulset store/store-db)".
func (c component) label() string {
	return fmt.Sprintf("component %s (%s %s)", c.Name, strings.ToLower(string(c.Kind)), c.Workload)
}

// writeName is the workload as the injector's write log names it: the
// Deployment's namespace/name, else kind/namespace/name.
func (c component) writeName() string {
	if c.Kind == upgradesv1beta1.KindDeployment {
		return c.Workload.String()
	}
	return strings.ToLower(string(c.Kind)) + "/" + c.Workload.String()
}

// componentsOf returns the components of an ApplicationUpgrade (either
// version), in spec order; nil for any other object.
func componentsOf(o client.Object) []component {
	key := client.ObjectKeyFromObject(o)
	switch u := o.(type) {
	case *upgradesv1alpha1.ApplicationUpgrade:
		mk := func(name string, s upgradesv1alpha1.ComponentSpec, deps []string) component {
			return component{Upgrade: key, Name: name, Kind: upgradesv1beta1.KindDeployment,
				Workload: types.NamespacedName{Namespace: u.Namespace, Name: s.DeploymentRef.Name}, Container: s.ContainerName, Image: s.Image, DependsOn: deps}
		}
		return []component{mk("worker", u.Spec.Worker, nil), mk("api", u.Spec.API, []string{"worker"})}
	case *upgradesv1beta1.ApplicationUpgrade:
		out := make([]component, len(u.Spec.Components))
		for i := range u.Spec.Components {
			c := &u.Spec.Components[i]
			out[i] = component{Upgrade: key, Graph: true, Name: c.Name, Kind: c.Kind(), Workload: c.Workload(u.Namespace).NamespacedName(),
				Container: c.ContainerName, Image: c.Image, DependsOn: c.DependsOn}
		}
		return out
	}
	return nil
}

// upgradesIn returns the ApplicationUpgrades among objs (either version),
// in order.
func upgradesIn(objs []client.Object) []client.Object {
	var out []client.Object
	for _, o := range objs {
		if componentsOf(o) != nil {
			out = append(out, o)
		}
	}
	return out
}

// componentNames lists the distinct component names of the upgrades among
// objs, in order of appearance: what a fault's dep may name.
func componentNames(objs []client.Object) []string {
	var out []string
	for _, u := range upgradesIn(objs) {
		for _, c := range componentsOf(u) {
			if !slices.Contains(out, c.Name) {
				out = append(out, c.Name)
			}
		}
	}
	return out
}

// named returns the components called name, one per upgrade that has one.
func named(objs []client.Object, name string) []component {
	var out []component
	for _, u := range upgradesIn(objs) {
		for _, c := range componentsOf(u) {
			if c.Name == name {
				out = append(out, c)
			}
		}
	}
	return out
}

// unpairable says why fault f cannot act on a workload of kind k, "" when
// it can. Both have no meaning rather than an unexpected outcome:
//   - never-ready on a StatefulSet or DaemonSet: neither has a progress
//     deadline (only a Deployment's controller sets
//     Progressing=False/ProgressDeadlineExceeded, pkg/controller/deployment
//     progress.go), so a pod that runs and never becomes Ready fails
//     nothing: the rollout waits, the operator with it
//     (operator/rollout.AssessStatefulSet, AssessDaemonSet), and the run has
//     no terminal state to judge;
//   - scale, and edit of replicas, on a DaemonSet: it has no
//     spec.replicas (one pod per eligible node).
func unpairable(f Fault, k upgradesv1beta1.WorkloadKind) string {
	switch {
	case f.Kind == NeverReady && k != upgradesv1beta1.KindDeployment:
		return fmt.Sprintf("a %s has no progress deadline, so a pod that never becomes Ready fails nothing and the upgrade waits forever; aim it at a Deployment component", k)
	case k == upgradesv1beta1.KindDaemonSet && (f.Kind == Scale || f.Kind == Edit && f.Str("field") == "replicas"):
		return "a DaemonSet has no spec.replicas (it runs one pod per node); aim it at a Deployment or StatefulSet component"
	}
	return ""
}

// aimsAtComponent reports whether f's dep parameter names a component
// (respec's "both" and "all" name every component).
func aimsAtComponent(f Fault) bool {
	if _, ok := f.Args["dep"]; !ok || !aimed[f.Kind] {
		return false
	}
	return f.Kind != Respec || !everyComponent(f.Str("dep"))
}

func everyComponent(dep string) bool { return dep == "both" || dep == "all" }

// RefuseTargets refuses, in one line, a schedule with a fault aimed at a
// component that no upgrade among objs has, or at one whose workload kind
// the fault has no meaning for (unpairable). API, process and node faults
// pass.
func RefuseTargets(objs []client.Object, faults []Fault) error {
	for _, f := range faults {
		if !aimsAtComponent(f) {
			continue
		}
		cs := named(objs, f.Str("dep"))
		if len(cs) == 0 {
			return fmt.Errorf("fault %s: no upgrade has a component named %q (components: %s)", f, f.Str("dep"), strings.Join(componentNames(objs), ", "))
		}
		for _, c := range cs {
			if why := unpairable(f, c.Kind); why != "" {
				return fmt.Errorf("fault %s cannot act on %s of upgrade %s: %s", f, c.label(), c.Upgrade, why)
			}
		}
	}
	return nil
}

// workloadOf returns the object among objs that is c's workload, nil when
// none is.
func workloadOf(objs []client.Object, c component) client.Object {
	for _, o := range objs {
		kind, _ := workloadTemplate(o)
		if kind == strings.ToLower(string(c.Kind)) && client.ObjectKeyFromObject(o) == c.Workload {
			return o
		}
	}
	return nil
}

// containerImage is the image of c's container in the pod template tpl
// ("" when absent): the container named c.Container, else the only one.
func containerImage(tpl *corev1.PodTemplateSpec, container string) string {
	for _, ct := range tpl.Spec.Containers {
		if ct.Name == container || container == "" && len(tpl.Spec.Containers) == 1 {
			return ct.Image
		}
	}
	return ""
}

// originalImage is the image c's workload runs as objs create it ("" when
// objs do not hold it).
func originalImage(objs []client.Object, c component) string {
	o := workloadOf(objs, c)
	if o == nil {
		return ""
	}
	_, tpl := workloadTemplate(o)
	return containerImage(tpl, c.Container)
}

// containerName is c's container in its workload: c.Container, else the
// name of the workload's only container.
func containerName(objs []client.Object, c component) string {
	if c.Container != "" {
		return c.Container
	}
	if o := workloadOf(objs, c); o != nil {
		if _, tpl := workloadTemplate(o); len(tpl.Spec.Containers) == 1 {
			return tpl.Spec.Containers[0].Name
		}
	}
	return c.Name
}

// newWorkload returns an empty object of c's workload kind.
func newWorkload(k upgradesv1beta1.WorkloadKind) client.Object {
	switch k {
	case upgradesv1beta1.KindStatefulSet:
		return &appsv1.StatefulSet{}
	case upgradesv1beta1.KindDaemonSet:
		return &appsv1.DaemonSet{}
	}
	return &appsv1.Deployment{}
}

// replicasOf is the workload's spec.replicas field, nil for a DaemonSet.
func replicasOf(o client.Object) **int32 {
	switch w := o.(type) {
	case *appsv1.Deployment:
		return &w.Spec.Replicas
	case *appsv1.StatefulSet:
		return &w.Spec.Replicas
	}
	return nil
}
