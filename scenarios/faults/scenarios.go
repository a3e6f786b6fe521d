package faults

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/deploy"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/input/manifests"
)

// Scenario is an application and its ApplicationUpgrade(s), the input of a run.
type Scenario struct {
	Name string
	Doc  string
	// Graph marks a scenario whose upgrade is given as v1beta1 (a
	// dependency graph): the faults aimed at a component draw any of its
	// components (Generate).
	Graph bool
	// Reconciler, when set, configures the operator as the scenario needs
	// (a flag of the manager), before any test customisation.
	Reconciler func(*controller.ApplicationUpgradeReconciler)
	// Objects returns fresh objects (namespaces, Deployments, upgrades).
	Objects func() ([]client.Object, error)
}

// Scenarios is the built-in set: the demo and variants of it. Seeded runs
// pick one per seed.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "demo", Doc: "the demo: job-worker then job-api, 3 replicas each, maxSurge 1, maxUnavailable 0", Objects: demo},
		{Name: "single", Doc: "1 replica each; the old worker pod uses its whole 60 s grace period to exit (C01)",
			Objects: variant(func(d *appsv1.Deployment) {
				d.Spec.Replicas = ptr.To[int32](1)
				d.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To[int64](60)
				setAnnotation(d, "pod-delete.stage.kwok.x-k8s.io/delay", "55s")
				setAnnotation(d, "pod-delete.stage.kwok.x-k8s.io/jitter-delay", "60s")
			})},
		{Name: "recreate", Doc: "the worker uses the Recreate strategy with 2 replicas (C05)",
			Objects: variant(func(d *appsv1.Deployment) {
				if d.Name == "job-worker" {
					d.Spec.Replicas = ptr.To[int32](2)
					d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
				}
			})},
		{Name: "wide", Doc: "5 replicas each, maxSurge 2, maxUnavailable 1: several old pods terminate at once",
			Objects: variant(func(d *appsv1.Deployment) {
				d.Spec.Replicas = ptr.To[int32](5)
				d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{
					MaxSurge: ptr.To(intstr.FromInt32(2)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
			})},
		{Name: "graph-diamond", Graph: true, Doc: "v1beta1 diamond (deploy/demo-graph): shop-db, then shop-worker and shop-indexer, then shop-api",
			Objects: graphVariant("demo-graph", nil)},
		{Name: "graph-chain", Graph: true, Doc: "v1beta1 chain of the four shop Deployments: db ← worker ← indexer ← api",
			Objects: graphVariant("demo-graph", func(u *upgradesv1beta1.ApplicationUpgrade, _ *[]client.Object) {
				dependsOn(u, map[string][]string{"db": nil, "worker": {"db"}, "indexer": {"worker"}, "api": {"indexer"}})
			})},
		{Name: "graph-wide", Graph: true, Doc: "v1beta1 wide wave: the four shop Deployments, none depending on another, all written at once",
			Objects: graphVariant("demo-graph", func(u *upgradesv1beta1.ApplicationUpgrade, _ *[]client.Object) {
				dependsOn(u, map[string][]string{"db": nil, "worker": nil, "indexer": nil, "api": nil})
			})},
		{Name: "graph-cross-namespace", Graph: true, Doc: "the v1beta1 diamond with shop-api in namespace shop-front: the edges into api cross namespaces",
			Objects: graphVariant("demo-graph", crossNamespace),
			// the manager's --allow-cross-namespace-refs
			Reconciler: func(r *controller.ApplicationUpgradeReconciler) { r.AllowCrossNamespaceRefs = true }},
		{Name: "graph-mixed", Graph: true, Doc: "mixed kinds (deploy/demo-stateful): store-db StatefulSet ← store-worker ← store-api, node-agent DaemonSet ← store-api",
			Objects: graphVariant("demo-stateful", nil)},
	}
}

// graphVariant loads the graph demo dir of deploy.Graphs and applies edit
// (may be nil) to its one v1beta1 upgrade; edit may add objects.
func graphVariant(dir string, edit func(u *upgradesv1beta1.ApplicationUpgrade, objs *[]client.Object)) func() ([]client.Object, error) {
	return func() ([]client.Object, error) {
		sub, err := fs.Sub(deploy.Graphs, dir)
		if err != nil {
			return nil, err
		}
		objs, err := manifests.LoadFS(sub, ".", manager.NewScheme())
		if err != nil {
			return nil, err
		}
		if edit == nil {
			return objs, nil
		}
		for _, o := range objs {
			if u, ok := o.(*upgradesv1beta1.ApplicationUpgrade); ok {
				edit(u, &objs)
				return objs, nil
			}
		}
		return nil, fmt.Errorf("deploy/%s has no v1beta1 ApplicationUpgrade", dir)
	}
}

// dependsOn sets each component's dependsOn from deps (by component name).
func dependsOn(u *upgradesv1beta1.ApplicationUpgrade, deps map[string][]string) {
	for i := range u.Spec.Components {
		u.Spec.Components[i].DependsOn = deps[u.Spec.Components[i].Name]
	}
}

// crossNamespace moves the diamond's shop-api Deployment to namespace
// shop-front (created before it) and points the api component there.
func crossNamespace(u *upgradesv1beta1.ApplicationUpgrade, objs *[]client.Object) {
	const front = "shop-front"
	for _, o := range *objs {
		if d, ok := o.(*appsv1.Deployment); ok && d.Name == "shop-api" {
			d.Namespace = front
		}
	}
	for i := range u.Spec.Components {
		if c := &u.Spec.Components[i]; c.Name == "api" {
			c.DeploymentRef.Namespace = front
		}
	}
	*objs = append([]client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: front}}}, *objs...)
}

// WithReconciler is the scenario's operator configuration followed by
// then (either may be nil).
func (s Scenario) WithReconciler(then func(*controller.ApplicationUpgradeReconciler)) func(*controller.ApplicationUpgradeReconciler) {
	if s.Reconciler == nil {
		return then
	}
	return func(r *controller.ApplicationUpgradeReconciler) {
		s.Reconciler(r)
		if then != nil {
			then(r)
		}
	}
}

// IsGraph reports whether the built-in scenario name is a graph one.
func IsGraph(name string) bool {
	for _, s := range Scenarios() {
		if s.Name == name {
			return s.Graph
		}
	}
	return false
}

// ScenarioNames lists the built-in scenarios' names.
func ScenarioNames() []string {
	var out []string
	for _, s := range Scenarios() {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}

// LookupScenario returns the built-in scenario name.
func LookupScenario(name string) (Scenario, error) {
	for _, s := range Scenarios() {
		if s.Name == name {
			return s, nil
		}
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q (built-in: %s)", name, strings.Join(ScenarioNames(), ", "))
}

func demo() ([]client.Object, error) {
	return manifests.LoadFS(deploy.Demo, ".", manager.NewScheme())
}

// variant is the demo with every Deployment changed by edit.
func variant(edit func(d *appsv1.Deployment)) func() ([]client.Object, error) {
	return func() ([]client.Object, error) {
		objs, err := demo()
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if d, ok := o.(*appsv1.Deployment); ok {
				edit(d)
			}
		}
		return objs, nil
	}
}

func setAnnotation(d *appsv1.Deployment, k, v string) {
	if d.Spec.Template.Annotations == nil {
		d.Spec.Template.Annotations = map[string]string{}
	}
	d.Spec.Template.Annotations[k] = v
}
