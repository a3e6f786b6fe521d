package simulator

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// execWorkload runs the StatefulSet / DaemonSet commands of a transcript
// script; handled is false for the other commands.
func (h *transcriptHarness) execWorkload(f []string) (handled bool, err error) {
	ctx := context.Background()
	switch f[0] {
	case "nodes":
		if h.sim != nil {
			return true, fmt.Errorf("nodes must come before the first object")
		}
		h.nodes, err = strconv.Atoi(f[1])
		return true, err
	case "statefulset", "daemonset":
		h.ensureSim()
		h.tracer.SetEnabled(false)
		h.name, h.kind = f[1], f[0]
		var obj client.Object
		if f[0] == "statefulset" {
			obj, err = transcriptStatefulSet(f[1], kv(f[2:]))
		} else {
			obj, err = transcriptDaemonSet(f[1], kv(f[2:]))
		}
		if err != nil {
			return true, err
		}
		return true, h.sim.Client().Create(ctx, obj)
	case "delete-pod":
		fmt.Fprintf(h.out, "> %s\n", strings.Join(f, " "))
		h.tracer.SetEnabled(true)
		return true, h.sim.Client().Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: f[1]}})
	case "delete-pod-on":
		fmt.Fprintf(h.out, "> %s\n", strings.Join(f, " "))
		h.tracer.SetEnabled(true)
		pods := &corev1.PodList{}
		if err := h.sim.Client().List(ctx, pods, client.InNamespace("default")); err != nil {
			return true, err
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.Spec.NodeName == f[1] && p.DeletionTimestamp == nil {
				return true, h.sim.Client().Delete(ctx, p)
			}
		}
		return true, fmt.Errorf("no pod on node %s", f[1])
	}
	return false, nil
}

func (h *transcriptHarness) printWorkload() error {
	ctx, key := context.Background(), client.ObjectKey{Namespace: "default", Name: h.name}
	if h.kind == "statefulset" {
		s := &appsv1.StatefulSet{}
		if err := h.sim.Client().Get(ctx, key, s); err != nil {
			return err
		}
		fmt.Fprintf(h.out, "%s sts %s %s\n", FormatElapsed(h.sim.Elapsed()), h.name, StatefulSetStatusLine(s))
		return nil
	}
	d := &appsv1.DaemonSet{}
	if err := h.sim.Client().Get(ctx, key, d); err != nil {
		return err
	}
	fmt.Fprintf(h.out, "%s ds %s %s\n", FormatElapsed(h.sim.Elapsed()), h.name, DaemonSetStatusLine(d))
	return nil
}

// updateWorkload applies "set image=TAG replicas=N partition=N" to the
// StatefulSet or DaemonSet.
func (h *transcriptHarness) updateWorkload(f []string) error {
	ctx, key := context.Background(), client.ObjectKey{Namespace: "default", Name: h.name}
	h.tracer.SetEnabled(true)
	var obj client.Object
	var tmpl *corev1.PodTemplateSpec
	var sts *appsv1.StatefulSet
	if h.kind == "statefulset" {
		sts = &appsv1.StatefulSet{}
		obj, tmpl = sts, &sts.Spec.Template
	} else {
		ds := &appsv1.DaemonSet{}
		obj, tmpl = ds, &ds.Spec.Template
	}
	if err := h.sim.Client().Get(ctx, key, obj); err != nil {
		return err
	}
	for k, v := range kv(f[1:]) {
		switch {
		case k == "image":
			tmpl.Spec.Containers[0].Image = "registry.example/" + h.name + ":" + v
		case k == "replicas" && sts != nil:
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			sts.Spec.Replicas = ptr.To(int32(n))
		case k == "partition" && sts != nil && sts.Spec.UpdateStrategy.RollingUpdate != nil:
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			sts.Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(int32(n))
		default:
			return fmt.Errorf("cannot set %q on a %s", k, h.kind)
		}
	}
	return h.sim.Client().Update(ctx, obj)
}

// workloadTemplate is the pod template of the transcripts' StatefulSets
// and DaemonSets: label app=NAME, one container "app" with image
// registry.example/NAME:TAG, the kwok stage annotations create, ready,
// delete (and their jitter) and grace (terminationGracePeriodSeconds).
func workloadTemplate(name string, o map[string]string) (corev1.PodTemplateSpec, int32, error) {
	pod := map[string]string{}
	for k, v := range o {
		if k != "strategy" && k != "surge" && k != "unavailable" {
			pod[k] = v
		}
	}
	d, err := transcriptDeployment(name, pod)
	if err != nil {
		return corev1.PodTemplateSpec{}, 0, err
	}
	return d.Spec.Template, *d.Spec.Replicas, nil
}

// transcriptStatefulSet builds a StatefulSet from key=value settings:
// replicas, policy (OrderedReady|Parallel), strategy (RollingUpdate|
// OnDelete), partition, unavailable (maxUnavailable), minReady and the
// pod settings of workloadTemplate.
func transcriptStatefulSet(name string, o map[string]string) (*appsv1.StatefulSet, error) {
	t, replicas, err := workloadTemplate(name, o)
	if err != nil {
		return nil, err
	}
	minReady, _ := strconv.Atoi(o["minReady"])
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), ServiceName: name, MinReadySeconds: int32(minReady),
			Selector: &metav1.LabelSelector{MatchLabels: t.Labels}, Template: t,
			PodManagementPolicy: appsv1.PodManagementPolicyType(o["policy"])},
	}
	switch o["strategy"] {
	case "", "RollingUpdate":
		ru := &appsv1.RollingUpdateStatefulSetStrategy{}
		if v, ok := o["partition"]; ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, err
			}
			ru.Partition = ptr.To(int32(n))
		}
		if v, ok := o["unavailable"]; ok {
			ru.MaxUnavailable = ptr.To(intstr.Parse(v))
		}
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: ru}
	case "OnDelete":
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	default:
		return nil, fmt.Errorf("unknown strategy %q", o["strategy"])
	}
	return s, nil
}

// transcriptDaemonSet builds a DaemonSet from key=value settings: strategy
// (RollingUpdate|OnDelete), surge, unavailable, minReady and the pod
// settings of workloadTemplate.
func transcriptDaemonSet(name string, o map[string]string) (*appsv1.DaemonSet, error) {
	t, _, err := workloadTemplate(name, o)
	if err != nil {
		return nil, err
	}
	minReady, _ := strconv.Atoi(o["minReady"])
	d := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: t.Labels}, Template: t, MinReadySeconds: int32(minReady)},
	}
	switch o["strategy"] {
	case "", "RollingUpdate":
		ru := &appsv1.RollingUpdateDaemonSet{}
		if v, ok := o["surge"]; ok {
			ru.MaxSurge = ptr.To(intstr.Parse(v))
		}
		if v, ok := o["unavailable"]; ok {
			ru.MaxUnavailable = ptr.To(intstr.Parse(v))
		}
		d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: ru}
	case "OnDelete":
		d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	default:
		return nil, fmt.Errorf("unknown strategy %q", o["strategy"])
	}
	return d, nil
}
