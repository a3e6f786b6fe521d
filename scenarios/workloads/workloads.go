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
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
			if p := &pods.Items[i]; p.DeletionTimestamp == nil && targetNode(p) == node {
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
// sequences. Feed it every StatefulSet, DaemonSet and Pod event in commit
// order (per object), then read Sequences.
type Recorder struct {
	// PerPod: a StatefulSet's pods one sequence each (see Scenario.PerPod).
	PerPod bool
	seqs   map[string][]string
	revs   map[string]map[string]string // workload → revision name → r1, r2, ...
	seen   map[string]bool              // pod UID → ready seen
}

// PodsSeen is how many pods (by UID) the recorder has seen.
func (r *Recorder) PodsSeen() int { return len(r.seen) }

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{seqs: map[string][]string{}, revs: map[string]map[string]string{}, seen: map[string]bool{}}
}

func (r *Recorder) add(entity, state string) {
	s := r.seqs[entity]
	if len(s) == 0 || s[len(s)-1] != state {
		r.seqs[entity] = append(s, state)
	}
}

// rev names a workload's revision by order of first appearance in its
// status: "r1", "r2", ... (names differ between backends).
func (r *Recorder) rev(workload, name string) string {
	m := r.revs[workload]
	if m == nil {
		m = map[string]string{}
		r.revs[workload] = m
	}
	if _, ok := m[name]; !ok {
		m[name] = fmt.Sprintf("r%d", len(m)+1)
	}
	return m[name]
}

// Observe records one event: deleted says the object is gone.
func (r *Recorder) Observe(obj client.Object, deleted bool) {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		st := o.Status
		if st.ObservedGeneration == 0 {
			return // not yet seen by its controller
		}
		r.add(o.Name+" status", fmt.Sprintf("%s rep %d ready %d avail %d cur %d upd %d rev %s/%s", observed(o.Generation, st.ObservedGeneration),
			st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.CurrentReplicas, st.UpdatedReplicas,
			r.rev(o.Name, st.CurrentRevision), r.rev(o.Name, st.UpdateRevision)))
	case *appsv1.DaemonSet:
		st := o.Status
		if st.ObservedGeneration == 0 {
			return
		}
		r.add(o.Name+" status", fmt.Sprintf("%s desired %d current %d upd %d ready %d avail %d unavail %d", observed(o.Generation, st.ObservedGeneration),
			st.DesiredNumberScheduled, st.CurrentNumberScheduled, st.UpdatedNumberScheduled, st.NumberReady, st.NumberAvailable, st.NumberUnavailable))
	case *corev1.Pod:
		r.observePod(o, deleted)
	}
}

func observed(gen, og int64) string {
	if og < gen {
		return "NOT observed"
	}
	return "observed"
}

// observePod records a pod's lifecycle (created, ready, deleting,
// deleted) by image tag: a StatefulSet's pods as one sequence named by
// pod ("db-2 v2 ready"), a DaemonSet's per target node.
func (r *Recorder) observePod(p *corev1.Pod, deleted bool) {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return
	}
	img := p.Spec.Containers[0].Image
	tag := img[strings.LastIndex(img, ":")+1:]
	entity, prefix := ref.Name+" pods", p.Name+" "
	if r.PerPod {
		entity = "pod " + p.Name
	}
	if ref.Kind == "DaemonSet" {
		entity, prefix = ref.Name+" pods on "+targetNode(p), ""
	}
	uid := string(p.UID)
	_, known := r.seen[uid]
	switch {
	case deleted:
		r.add(entity, prefix+tag+" deleted")
		return
	case !known:
		r.seen[uid] = false
		r.add(entity, prefix+tag+" created")
	}
	if !r.seen[uid] && podReady(p) {
		r.seen[uid] = true
		r.add(entity, prefix+tag+" ready")
	}
	if p.DeletionTimestamp != nil {
		r.add(entity, prefix+tag+" deleting")
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// targetNode is spec.nodeName or the node the DaemonSet's node affinity names.
func targetNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range t.MatchFields {
				if f.Key == metav1.ObjectNameField && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return "?"
}

// Format renders the sequences, entities sorted: "== ENTITY" then one
// state per line.
func (r *Recorder) Format() string {
	keys := make([]string, 0, len(r.seqs))
	for k := range r.seqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "== %s\n", k)
		for _, s := range r.seqs[k] {
			fmt.Fprintln(&b, s)
		}
	}
	return b.String()
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
