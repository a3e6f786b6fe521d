package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// The workload kinds beside Deployments: read, their pods listed, their
// image written, ControllerRevisions read for DaemonSets (the current
// revision's hash, rollout.CurrentDaemonSetRevision).
// +kubebuilder:rbac:groups=apps,resources=statefulsets;daemonsets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;watch

// StatefulSetAssessFunc is the StatefulSet rollout assessment;
// rollout.AssessStatefulSet in the product.
type StatefulSetAssessFunc func(*appsv1.StatefulSet, []corev1.Pod, rollout.Options) rollout.Verdict

// DaemonSetAssessFunc is the DaemonSet rollout assessment;
// rollout.AssessDaemonSet in the product.
type DaemonSetAssessFunc func(*appsv1.DaemonSet, []appsv1.ControllerRevision, []corev1.Pod, rollout.Options) rollout.Verdict

// assessWorkload lists what the kind's assessment reads, by the
// workload's selector (pods terminating included; ReplicaSets for a
// Deployment, ControllerRevisions for a DaemonSet), and assesses it.
func (r *ApplicationUpgradeReconciler) assessWorkload(ctx context.Context, obj client.Object) (rollout.Verdict, error) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return r.assess(ctx, o)
	case *appsv1.StatefulSet:
		pods, v, err := r.podsOf(ctx, "statefulset", o.Namespace, o.Name, o.Spec.Selector)
		if err != nil || v != nil {
			return deref(v), err
		}
		assess := r.AssessStatefulSetFunc
		if assess == nil {
			assess = rollout.AssessStatefulSet
		}
		return assess(o, pods, r.AssessOptions), nil
	case *appsv1.DaemonSet:
		pods, v, err := r.podsOf(ctx, "daemonset", o.Namespace, o.Name, o.Spec.Selector)
		if err != nil || v != nil {
			return deref(v), err
		}
		sel, _ := labelSelectorAsSelector(o.Spec.Selector) // valid: podsOf parsed it
		var revs appsv1.ControllerRevisionList
		if err := r.Client.List(ctx, &revs, client.InNamespace(o.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return rollout.Verdict{}, fmt.Errorf("list controllerrevisions of daemonset %s/%s: %w", o.Namespace, o.Name, err)
		}
		assess := r.AssessDaemonSetFunc
		if assess == nil {
			assess = rollout.AssessDaemonSet
		}
		return assess(o, revs.Items, pods, r.AssessOptions), nil
	}
	return rollout.Verdict{}, fmt.Errorf("assess %T: not a supported workload", obj)
}

// podsOf lists the pods matching selector in namespace, sorted by name;
// an invalid selector is a Failed verdict (returned instead of pods).
func (r *ApplicationUpgradeReconciler) podsOf(ctx context.Context, kind, namespace, name string, selector *metav1.LabelSelector) ([]corev1.Pod, *rollout.Verdict, error) {
	sel, err := labelSelectorAsSelector(selector)
	if err != nil {
		return nil, &rollout.Verdict{State: rollout.Failed, Reason: "InvalidSelector",
			Message: fmt.Sprintf("%s %s/%s has an invalid selector: %v", kind, namespace, name, err)}, nil
	}
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, nil, fmt.Errorf("list pods of %s %s/%s: %w", kind, namespace, name, err)
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods.Items, nil, nil
}

func deref(v *rollout.Verdict) rollout.Verdict {
	if v == nil {
		return rollout.Verdict{}
	}
	return *v
}

// workloadApply is imageApply for any supported kind: the apply
// configuration of obj's kind, identity and read resourceVersion with one
// container (name and image) in the pod template, and a function reading
// its metadata, where the API server's answer lands after the apply
// (generation, resourceVersion: genOf, rvOf).
func workloadApply(obj client.Object, container, image string) (runtime.ApplyConfiguration, func() *metav1ac.ObjectMetaApplyConfiguration, error) {
	tpl := corev1ac.PodTemplateSpec().WithSpec(corev1ac.PodSpec().
		WithContainers(corev1ac.Container().WithName(container).WithImage(image)))
	switch o := obj.(type) {
	case *appsv1.Deployment:
		ac := imageApply(o, container, image)
		return ac, func() *metav1ac.ObjectMetaApplyConfiguration { return ac.ObjectMetaApplyConfiguration }, nil
	case *appsv1.StatefulSet:
		ac := appsv1ac.StatefulSet(o.Name, o.Namespace).WithResourceVersion(o.ResourceVersion).
			WithSpec(appsv1ac.StatefulSetSpec().WithTemplate(tpl))
		return ac, func() *metav1ac.ObjectMetaApplyConfiguration { return ac.ObjectMetaApplyConfiguration }, nil
	case *appsv1.DaemonSet:
		ac := appsv1ac.DaemonSet(o.Name, o.Namespace).WithResourceVersion(o.ResourceVersion).
			WithSpec(appsv1ac.DaemonSetSpec().WithTemplate(tpl))
		return ac, func() *metav1ac.ObjectMetaApplyConfiguration { return ac.ObjectMetaApplyConfiguration }, nil
	}
	return nil, nil, fmt.Errorf("write image to %T: not a supported workload", obj)
}

func genOf(m *metav1ac.ObjectMetaApplyConfiguration) int64 {
	if m == nil || m.Generation == nil {
		return 0
	}
	return *m.Generation
}

// rvOf is the resourceVersion in m ("" when none).
func rvOf(m *metav1ac.ObjectMetaApplyConfiguration) string {
	if m == nil || m.ResourceVersion == nil {
		return ""
	}
	return *m.ResourceVersion
}
