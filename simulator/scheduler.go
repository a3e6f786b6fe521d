package simulator

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// scheduler models kube-scheduler for pods of the default scheduler: every
// unbound pod is bound SchedulerDelay after it appears, through the
// pods/binding subresource, to the node with the fewest pods (ties by name;
// the default scoring spreads pods), or to the node a required node
// affinity names by metadata.name (DaemonSet pods). No resources, other
// affinity or taints are considered.
type scheduler struct {
	s     *Sim
	c     *simClient
	opts  KubeOptions
	nodes []string
}

func newScheduler(s *Sim, opts KubeOptions) *scheduler {
	nodes := append([]string(nil), opts.Nodes...)
	sort.Strings(nodes)
	return &scheduler{s: s, c: s.clientFor("kube-scheduler"), opts: opts, nodes: nodes}
}

func (sc *scheduler) install() {
	sc.s.Subscribe(func(ev WatchEvent) {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type != watch.Added || pod.Spec.NodeName != "" || pod.Spec.SchedulerName != corev1.DefaultSchedulerName {
			return
		}
		key := client.ObjectKeyFromObject(pod)
		sc.s.Schedule(sc.opts.SchedulerDelay, "schedule pod "+key.String(), func() { sc.bind(key, pod.UID) })
	})
}

func (sc *scheduler) bind(key client.ObjectKey, uid types.UID) {
	ctx := sc.s.ctx()
	pod := &corev1.Pod{}
	if err := sc.c.Get(ctx, key, pod); err != nil || pod.UID != uid || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
		return
	}
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: pod.UID},
		Target: corev1.ObjectReference{Kind: "Node", Name: sc.nodeFor(pod)}}
	if err := sc.c.SubResource("binding").Create(ctx, pod, b); err != nil && !apierrors.IsConflict(err) {
		// the real scheduler requeues a pod whose binding failed
		sc.s.Schedule(sc.opts.SchedulerDelay+backoffBase, "retry schedule pod "+key.String(), func() { sc.bind(key, uid) })
	}
}

// nodeFor is the node a pod's required node affinity names by
// metadata.name (how the DaemonSet controller pins its pods: the
// NodeAffinity filter leaves that one node), else pickNode.
func (sc *scheduler) nodeFor(pod *corev1.Pod) string {
	if n := targetNodeName(pod); n != "" {
		return n
	}
	return sc.pickNode()
}

// pickNode is the node with the fewest pods bound to it.
func (sc *scheduler) pickNode() string {
	counts := map[string]int{}
	for _, o := range sc.s.store.list(corev1.SchemeGroupVersion.WithKind("Pod")) {
		counts[o.(*corev1.Pod).Spec.NodeName]++
	}
	best := sc.nodes[0]
	for _, n := range sc.nodes[1:] {
		if counts[n] < counts[best] {
			best = n
		}
	}
	return best
}

// installNodes creates the nodes that do not exist yet, Ready and
// untainted, as kwok manages them.
func (s *Sim) installNodes(names []string) {
	c := s.clientFor("kubelet")
	ctx := context.Background()
	for _, name := range names {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "type": "kwok"}}}
		if err := c.Create(ctx, n); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			panic(fmt.Sprintf("simulator: create node %s: %v", name, err))
		}
		n.Status.Phase = corev1.NodeRunning
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			Reason: "KubeletReady", Message: "kubelet is posting ready status",
			LastHeartbeatTime: metav1.NewTime(s.now), LastTransitionTime: metav1.NewTime(s.now)}}
		if err := c.Status().Update(ctx, n); err != nil {
			panic(fmt.Sprintf("simulator: mark node %s ready: %v", name, err))
		}
	}
}
