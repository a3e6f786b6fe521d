// Package workloads compares the simulator's StatefulSet and DaemonSet
// controller models with the real controllers (kube-controller-manager
// v1.37.2 on the local control plane, kwok nodes): each Scenario runs on
// both backends and its state sequences — per workload its status, per
// StatefulSet its pods and per DaemonSet node its pods, consecutive
// duplicates collapsed, timing ignored — must agree. The real controllers'
// sequences are committed under testdata/ (recorded by the e2e test
// TestRecordReal, `make test-workloads-real`), so the comparison with the
// simulator runs in `make test` without a cluster.
package workloads

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/fidelity"
)

// Scenario is a workload created, left to settle, then changed step by
// step, each step left to settle.
type Scenario struct {
	Name string
	// Nodes is the number of kwok nodes (NodeNames on both backends).
	Nodes int
	// PerPod records a StatefulSet's pods one sequence per pod (Parallel
	// pod management acts on them concurrently) instead of one sequence,
	// and lets Compare judge its status on the revision counters.
	PerPod bool
	// Object builds the StatefulSet or DaemonSet in namespace ns.
	Object func(ns string) client.Object
	// Steps change the object (on a fresh copy; the runner updates it) or
	// act with the client (a delete), each followed by a settle.
	Steps []Step
}

// Kind is the scenario's workload kind: eventlog.KindStatefulSet or
// eventlog.KindDaemonSet.
func (sc Scenario) Kind() string {
	if _, ok := sc.Object("").(*appsv1.DaemonSet); ok {
		return eventlog.KindDaemonSet
	}
	return eventlog.KindStatefulSet
}

// Step is one change of a Scenario: Change edits the workload, which the
// runner then updates; or Act acts on the cluster with c, and the settle
// after it waits for a pod to be created too (the workload replacing what
// was deleted).
type Step struct {
	Change func(obj client.Object)
	Act    func(ctx context.Context, c client.Client, ns string) error
}

// Stage timing of every scenario's pods (kwok annotations, honoured by the
// simulator's kubelet model and by kwok's stages alike).
var podAnnotations = map[string]string{
	"pod-ready.stage.kwok.x-k8s.io/delay":  "2s",
	"pod-delete.stage.kwok.x-k8s.io/delay": "5s",
}

func template(name, tag string) corev1.PodTemplateSpec {
	ann := map[string]string{}
	for k, v := range podAnnotations {
		ann[k] = v
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}, Annotations: ann},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/" + name + ":" + tag}}},
	}
}

func statefulSet(ns, name string, replicas int32, ru *appsv1.RollingUpdateStatefulSetStrategy) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), ServiceName: name,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: template(name, "v1"),
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: ru}},
	}
}

func daemonSet(ns, name string, surge, unavailable int) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: template(name, "v1"),
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxSurge: ptr.To(intstr.FromInt(surge)), MaxUnavailable: ptr.To(intstr.FromInt(unavailable))}}},
	}
}

func podTemplate(obj client.Object) *corev1.PodTemplateSpec {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		return &o.Spec.Template
	case *appsv1.DaemonSet:
		return &o.Spec.Template
	}
	panic(fmt.Sprintf("workloads: %T is not a StatefulSet or DaemonSet", obj))
}

func setImage(tag string) Step {
	return Step{Change: func(obj client.Object) {
		t := podTemplate(obj)
		t.Spec.Containers[0].Image = "registry.example/" + obj.GetName() + ":" + tag
	}}
}

func setPartition(p int32) Step {
	return Step{Change: func(obj client.Object) {
		obj.(*appsv1.StatefulSet).Spec.UpdateStrategy.RollingUpdate.Partition = ptr.To(p)
	}}
}

// deletePod deletes the named pod (what an OnDelete update waits for).
func deletePod(name string) Step {
	return Step{Act: func(ctx context.Context, c client.Client, ns string) error {
		return c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}}
}

// deleteDaemonPodOn deletes the DaemonSet pod on node (names are generated).
func deleteDaemonPodOn(node string) Step {
	return Step{Act: func(ctx context.Context, c client.Client, ns string) error {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.DeletionTimestamp == nil && eventlog.TargetNode(p) == node {
				return c.Delete(ctx, p)
			}
		}
		return fmt.Errorf("no pod on node %s in %s", node, ns)
	}}
}

// Scenarios are the compared scenarios.
var Scenarios = []Scenario{
	{Name: "sts-rolling-ordered", Nodes: 1,
		Object: func(ns string) client.Object { return statefulSet(ns, "db", 3, nil) },
		Steps:  []Step{setImage("v2")}},
	{Name: "sts-parallel", Nodes: 1, PerPod: true,
		Object: func(ns string) client.Object {
			s := statefulSet(ns, "db", 4, &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: ptr.To(intstr.FromInt(2))})
			s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
			return s
		},
		Steps: []Step{setImage("v2")}},
	{Name: "sts-ondelete", Nodes: 1,
		Object: func(ns string) client.Object {
			s := statefulSet(ns, "db", 3, nil)
			s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
			return s
		},
		Steps: []Step{setImage("v2"), deletePod("db-1")}},
	{Name: "sts-partition", Nodes: 1,
		Object: func(ns string) client.Object {
			return statefulSet(ns, "db", 3, &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](1)})
		},
		Steps: []Step{setImage("v2"), setPartition(0)}},
	{Name: "ds-surge", Nodes: 2,
		Object: func(ns string) client.Object { return daemonSet(ns, "agent", 1, 0) },
		Steps:  []Step{setImage("v2")}},
	{Name: "ds-unavailable", Nodes: 2,
		Object: func(ns string) client.Object { return daemonSet(ns, "agent", 0, 1) },
		Steps:  []Step{setImage("v2")}},
	{Name: "ds-ondelete", Nodes: 2,
		Object: func(ns string) client.Object {
			d := daemonSet(ns, "agent", 0, 1)
			d.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
			return d
		},
		Steps: []Step{setImage("v2"), deleteDaemonPodOn("kwok-node-1")}},
}

// Recorder turns watch events of one scenario's namespace into state
// sequences: an eventlog detailed recorder (the one every scenario's
// history uses), read through fidelity.SequencesWith — the states and the
// comparison of the fidelity report (make fidelity), not a second one.
// Feed it every StatefulSet, DaemonSet and Pod event, then read Sequences.
type Recorder struct {
	// PerPod: a StatefulSet's pods one sequence each (see Scenario.PerPod).
	PerPod bool
	events *eventlog.Recorder
	start  time.Time
	pods   map[types.UID]bool
}

// PodsSeen is how many pods (by UID) the recorder has seen.
func (r *Recorder) PodsSeen() int { return len(r.pods) }

// NewRecorder returns an empty Recorder; times are relative to start.
func NewRecorder(start time.Time) *Recorder {
	return &Recorder{events: eventlog.NewDetailedRecorder(start, nil), start: start, pods: map[types.UID]bool{}}
}

// Observe records one watch event at time at: deleted says the object is gone.
func (r *Recorder) Observe(obj client.Object, deleted bool, at time.Time) {
	typ := watch.Modified
	if deleted {
		typ = watch.Deleted
	}
	if p, ok := obj.(*corev1.Pod); ok && metav1.GetControllerOf(p) != nil {
		r.pods[p.UID] = true
	}
	r.events.Observe(typ, obj, at)
}

// Sequences are the recorded sequences (fidelity.SequencesWith; a
// StatefulSet's pods one sequence per pod when PerPod).
func (r *Recorder) Sequences(workload string) []fidelity.Sequence {
	return fidelity.SequencesWith(r.events.Events(), fidelity.Options{PerPod: map[string]bool{workload: r.PerPod}})
}

// Format renders sequences, entities sorted: "== ENTITY" then one state
// per line (the format of testdata/*.txt, read back by Parse).
func Format(seqs []fidelity.Sequence) string {
	var b strings.Builder
	for _, s := range seqs {
		fmt.Fprintf(&b, "== %s\n", s.Entity)
		for _, st := range s.States {
			fmt.Fprintln(&b, st)
		}
	}
	return b.String()
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Settled reports whether a scenario's workload has finished what its
// spec asks: status observed; for a StatefulSet every replica Ready and
// not terminating, at least replicas - partition of them at the update
// revision and counted so by the status (with partition 0 the update
// revision current; OnDelete: any revision); for a DaemonSet one Ready pod
// per node, all updated (OnDelete: any revision), the counters at their
// targets. pods are the workload's pods.
func Settled(obj client.Object, pods []corev1.Pod, nodes int) bool {
	for i := range pods {
		if pods[i].DeletionTimestamp != nil || !podReady(&pods[i]) {
			return false
		}
	}
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		st, n := o.Status, *o.Spec.Replicas
		partition := int32(0)
		if ru := o.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
			partition = *ru.Partition
		}
		updated := int32(0)
		for i := range pods {
			if pods[i].Labels[appsv1.ControllerRevisionHashLabelKey] == st.UpdateRevision {
				updated++
			}
		}
		rolling := o.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
		return st.ObservedGeneration == o.Generation && int32(len(pods)) == n && st.Replicas == n &&
			st.ReadyReplicas == n && st.AvailableReplicas == n && st.UpdatedReplicas == updated &&
			(!rolling || updated >= n-partition && (partition > 0 || st.CurrentRevision == st.UpdateRevision))
	case *appsv1.DaemonSet:
		st, n := o.Status, int32(nodes)
		rolling := o.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType
		return st.ObservedGeneration == o.Generation && int32(len(pods)) == n && st.DesiredNumberScheduled == n &&
			st.CurrentNumberScheduled == n && st.NumberAvailable == n && st.NumberUnavailable == 0 &&
			(!rolling || st.UpdatedNumberScheduled == n)
	}
	return false
}
