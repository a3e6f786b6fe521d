package simulator

import (
	"math"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestSameStringsIsSemanticDeepEqual: sameStrings answers as
// equality.Semantic.DeepEqual does for string maps, nil and empty alike.
func TestSameStringsIsSemanticDeepEqual(t *testing.T) {
	maps := []map[string]string{
		nil, {}, {"a": "1"}, {"a": "2"}, {"b": "1"}, {"a": ""}, {"": ""},
		{"a": "1", "b": "2"}, {"a": "1", "c": "2"}, {"a": "1", "b": "3"},
	}
	for _, a := range maps {
		for _, b := range maps {
			if got, want := sameStrings(a, b), equality.Semantic.DeepEqual(a, b); got != want {
				t.Errorf("sameStrings(%#v, %#v) = %v, Semantic.DeepEqual says %v", a, b, got, want)
			}
		}
	}
}

// TestSemanticEqualIsSemanticDeepEqual: semanticEqual answers as
// equality.Semantic.DeepEqual does, pair by pair, over objects that
// differ in the ways its walk distinguishes (nil and empty, the same
// instant in two locations, one quantity written two ways, a shared
// slice, a pointer set or not, an interface, a cycle).
func TestSemanticEqualIsSemanticDeepEqual(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC)
	pod := func(edit func(p *corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"app": "a"},
				CreationTimestamp: metav1.NewTime(t0)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}}},
		}
		if edit != nil {
			edit(p)
		}
		return p
	}
	shared := []corev1.Container{{Name: "c", Image: "img:1"}}
	values := []any{
		pod(nil),
		pod(func(p *corev1.Pod) { p.Labels = nil }),
		pod(func(p *corev1.Pod) { p.Labels = map[string]string{} }),
		pod(func(p *corev1.Pod) { p.Labels["app"] = "b" }),
		pod(func(p *corev1.Pod) { p.Status.Conditions = nil }),
		pod(func(p *corev1.Pod) { p.Status.Conditions = []corev1.PodCondition{} }),
		pod(func(p *corev1.Pod) {
			p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(t0.In(time.FixedZone("x", 3600)))
		}),
		pod(func(p *corev1.Pod) { p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(t0.Add(time.Second)) }),
		pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("1000m")
		}),
		pod(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("2")
		}),
		pod(func(p *corev1.Pod) { p.Spec.Containers = shared }),
		pod(func(p *corev1.Pod) { p.Spec.Containers = shared }),
		pod(func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](0) }),
		pod(func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30) }),
		pod(func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Ready: true}} }),
		pod(func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c"}} }),
		&corev1.Pod{},
		&appsv1.Deployment{},
		nil,
		[]any{"a", 1, nil},
		[]any{"a", 1.0, nil},
		[]any{"a", 1, map[string]any{}},
		math.NaN(),
	}
	for i, a := range values {
		for j, b := range values {
			if got, want := semanticEqual(a, b), equality.Semantic.DeepEqual(a, b); got != want {
				t.Errorf("values %d and %d: semanticEqual = %v, Semantic.DeepEqual says %v", i, j, got, want)
			}
		}
	}
	type node struct {
		Name string
		Next *node
	}
	x, y := &node{Name: "x"}, &node{Name: "x"}
	x.Next, y.Next = x, y
	if !semanticEqual(x, y) || !equality.Semantic.DeepEqual(x, y) {
		t.Errorf("two equal cycles: semanticEqual %v, Semantic.DeepEqual %v; want both true", semanticEqual(x, y), equality.Semantic.DeepEqual(x, y))
	}
}

// TestUnsafeGetIsApplyOptions: unsafeGet reads the options as
// GetOptions.ApplyOptions does, the short cuts included.
func TestUnsafeGetIsApplyOptions(t *testing.T) {
	for _, opts := range [][]client.GetOption{
		nil,
		{client.UnsafeDisableDeepCopy},
		{client.UnsafeDisableDeepCopyOption(false)},
		{&client.GetOptions{UnsafeDisableDeepCopy: ptr.To(true)}},
		{&client.GetOptions{}},
		{client.UnsafeDisableDeepCopy, client.UnsafeDisableDeepCopyOption(false)},
		{client.UnsafeDisableDeepCopyOption(false), client.UnsafeDisableDeepCopy},
	} {
		want := ptr.Deref((&client.GetOptions{}).ApplyOptions(opts).UnsafeDisableDeepCopy, false)
		if got := unsafeGet(opts); got != want {
			t.Errorf("unsafeGet(%#v) = %v, ApplyOptions says %v", opts, got, want)
		}
	}
}
