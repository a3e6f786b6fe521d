package simulator

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// validate rejects the invalid built-in objects that would make the
// controller models misbehave, with the errors kube-apiserver's validation
// (pkg/apis/apps/validation, pkg/apis/core/validation) gives. It checks a
// small subset: selectors, replica counts, rolling-update parameters and
// that pods have containers.
func validate(gvk schema.GroupVersionKind, obj client.Object) error {
	var errs field.ErrorList
	switch o := obj.(type) {
	case *appsv1.Deployment:
		errs = validateSelector(o.Spec.Selector, o.Spec.Template.Labels)
		errs = append(errs, validateReplicas(o.Spec.Replicas)...)
		errs = append(errs, validateStrategy(o.Spec.Strategy)...)
		errs = append(errs, validatePodSpec(field.NewPath("spec", "template", "spec"), &o.Spec.Template.Spec)...)
	case *appsv1.ReplicaSet:
		errs = validateSelector(o.Spec.Selector, o.Spec.Template.Labels)
		errs = append(errs, validateReplicas(o.Spec.Replicas)...)
		errs = append(errs, validatePodSpec(field.NewPath("spec", "template", "spec"), &o.Spec.Template.Spec)...)
	case *appsv1.StatefulSet:
		errs = validateStatefulSet(o)
	case *appsv1.DaemonSet:
		errs = validateDaemonSet(o)
	case *corev1.Pod:
		errs = validatePodSpec(field.NewPath("spec"), &o.Spec)
	case *corev1.ResourceQuota:
		return validateResourceQuota(o)
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gvk.GroupKind(), obj.GetName(), errs)
}

func validateSelector(sel *metav1.LabelSelector, templateLabels map[string]string) field.ErrorList {
	p := field.NewPath("spec", "selector")
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		return field.ErrorList{field.Required(p, "")}
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return field.ErrorList{field.Invalid(p, sel, err.Error())}
	}
	if !s.Matches(labels.Set(templateLabels)) {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "template", "metadata", "labels"),
			templateLabels, "`selector` does not match template `labels`")}
	}
	return nil
}

func validateReplicas(r *int32) field.ErrorList {
	if r != nil && *r < 0 {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), *r, "must be greater than or equal to 0")}
	}
	return nil
}

func validateStrategy(st appsv1.DeploymentStrategy) field.ErrorList {
	p := field.NewPath("spec", "strategy")
	switch st.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if st.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(p.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		ru := st.RollingUpdate
		surge, err1 := intstr.GetScaledValueFromIntOrPercent(ru.MaxSurge, 100, true)
		unavail, err2 := intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, 100, false)
		if err1 != nil || err2 != nil {
			return field.ErrorList{field.Invalid(p.Child("rollingUpdate"), ru, "must be an integer or percentage")}
		}
		if surge == 0 && unavail == 0 {
			return field.ErrorList{field.Invalid(p.Child("rollingUpdate", "maxUnavailable"), ru.MaxUnavailable, "may not be 0 when `maxSurge` is 0")}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), st.Type, []string{"Recreate", "RollingUpdate"})}
	}
	return nil
}

func validatePodSpec(p *field.Path, spec *corev1.PodSpec) field.ErrorList {
	if len(spec.Containers) == 0 {
		return field.ErrorList{field.Required(p.Child("containers"), "")}
	}
	var errs field.ErrorList
	for i, c := range spec.Containers {
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("containers").Index(i).Child("name"), ""))
		}
		if c.Image == "" {
			errs = append(errs, field.Required(p.Child("containers").Index(i).Child("image"), ""))
		}
	}
	return errs
}
