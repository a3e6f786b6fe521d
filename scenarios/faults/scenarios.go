package faults

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/deploy"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/manifests"
)

// Scenario is an application and its ApplicationUpgrade(s), the input of a run.
type Scenario struct {
	Name string
	Doc  string
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
	}
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
