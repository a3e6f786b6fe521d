package appupgrade

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// NewWorkload is an empty object of kind, or an error naming the kind.
func NewWorkload(kind v1beta1.WorkloadKind) (client.Object, error) {
	switch kind {
	case v1beta1.KindDeployment:
		return &appsv1.Deployment{}, nil
	case v1beta1.KindStatefulSet:
		return &appsv1.StatefulSet{}, nil
	case v1beta1.KindDaemonSet:
		return &appsv1.DaemonSet{}, nil
	}
	return nil, fmt.Errorf("workload kind %q is not supported: use Deployment, StatefulSet or DaemonSet", kind)
}

// PodTemplate is the pod template of a Deployment, StatefulSet or
// DaemonSet (nil for anything else).
func PodTemplate(obj client.Object) *corev1.PodTemplateSpec {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return &o.Spec.Template
	case *appsv1.StatefulSet:
		return &o.Spec.Template
	case *appsv1.DaemonSet:
		return &o.Spec.Template
	}
	return nil
}

// ResolveContainer picks the named container of workload w's pod
// template, or the only one when name is empty. The errors list the
// container names so the user can fix the spec.
func ResolveContainer(w v1beta1.WorkloadKey, tpl *corev1.PodTemplateSpec, name, field string) (*corev1.Container, error) {
	cs := tpl.Spec.Containers
	names := make([]string, 0, len(cs))
	for i := range cs {
		names = append(names, cs[i].Name)
		if name != "" && cs[i].Name == name {
			return &cs[i], nil
		}
	}
	switch {
	case name != "":
		return nil, fmt.Errorf("%s has no container %q (containers: %s): fix %s.containerName",
			w, name, strings.Join(names, ", "), field)
	case len(cs) == 1:
		return &cs[0], nil
	case len(cs) == 0:
		return nil, fmt.Errorf("%s has no containers", w)
	}
	return nil, fmt.Errorf("%s has %d containers (%s): set %s.containerName to one of them",
		w, len(cs), strings.Join(names, ", "), field)
}
