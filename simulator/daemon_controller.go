package simulator

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DaemonSetControllerName names the DaemonSet controller model (see
// Sim.Controller).
const DaemonSetControllerName = "daemonset-controller"

var daemonSetKind = appsv1.SchemeGroupVersion.WithKind("DaemonSet")

// daemonSetsController models kube-controller-manager's DaemonSet
// controller, kubernetes/kubernetes v1.37.2 pkg/controller/daemon
// (daemon_controller.go syncDaemonSet, manage, podsShouldBeOnNode,
// syncNodes, updateDaemonSetStatus; update.go rollingUpdate,
// updatedDesiredNodeCounts, constructHistory, cleanupHistory). Each method
// names the upstream function it mirrors.
//
// Simplifications (also in simulator/README.md):
//   - reads are the store's, never stale: no expectations, no consistency
//     store; no adoption of orphans (ownership is the controller reference);
//   - which nodes should run a pod: spec.template.spec.nodeName, the
//     template's nodeSelector and the nodes' NoSchedule / NoExecute taints
//     against the pod's tolerations (exact key/value/effect matching, the
//     daemon tolerations added); node affinity is not evaluated;
//   - the deprecated templateGeneration annotation and
//     pod-template-generation label are not written: pods are compared by
//     controller-revision-hash only;
//   - the revision hash is the simulator's pod-template-hash (FNV over the
//     template's JSON, see podTemplateHash), not the real spew-based value;
//   - failed pods are deleted without the per-node back-off; no events;
//   - pod creations of one sync run one after the other in slow-start
//     batches instead of concurrently.
type daemonSetsController struct {
	s *Sim
	c *simClient
}

// Reconcile mirrors DaemonSetsController.syncDaemonSet.
func (dsc *daemonSetsController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ds := &appsv1.DaemonSet{}
	if err := dsc.c.Get(ctx, req.NamespacedName, ds); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	nodes, err := dsc.listNodes(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	if ds.Spec.Selector == nil || (len(ds.Spec.Selector.MatchLabels) == 0 && len(ds.Spec.Selector.MatchExpressions) == 0) {
		return reconcile.Result{}, nil // "This daemon set is selecting all pods"
	}
	if ds.DeletionTimestamp != nil {
		return reconcile.Result{}, nil
	}
	cur, old, err := dsc.constructHistory(ctx, ds)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to construct revisions of daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	hash := cur.Labels[appsv1.DefaultDaemonSetUniqueLabelKey]
	err = dsc.updateDaemonSet(ctx, ds, nodes, hash, old)
	requeue, statusErr := dsc.updateDaemonSetStatus(ctx, ds, nodes, hash, true)
	if err != nil {
		return reconcile.Result{}, err
	}
	if statusErr != nil {
		return reconcile.Result{}, statusErr
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// listNodes is the nodeLister.List(labels.Everything()) of syncDaemonSet.
func (dsc *daemonSetsController) listNodes(ctx context.Context) ([]*corev1.Node, error) {
	list := &corev1.NodeList{}
	if err := dsc.c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	nodes := make([]*corev1.Node, len(list.Items))
	for i := range list.Items {
		nodes[i] = &list.Items[i]
	}
	return nodes, nil
}

// updateDaemonSet mirrors updateDaemonSet: manage, then the update
// strategy (nothing for OnDelete), then cleanupHistory.
func (dsc *daemonSetsController) updateDaemonSet(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string, old []*appsv1.ControllerRevision) error {
	if err := dsc.manage(ctx, ds, nodes, hash); err != nil {
		return err
	}
	if ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if err := dsc.rollingUpdate(ctx, ds, nodes, hash); err != nil {
			return err
		}
	}
	if err := dsc.cleanupHistory(ctx, ds, old); err != nil {
		return fmt.Errorf("failed to clean up revisions of daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	return nil
}

// getNodesToDaemonPods mirrors getNodesToDaemonPods: the DaemonSet's pods
// by target node (spec.nodeName, else the node their affinity names);
// terminal pods that are being deleted are left out unless asked for.
func (dsc *daemonSetsController) getNodesToDaemonPods(ctx context.Context, ds *appsv1.DaemonSet, includeDeletedTerminal bool) (map[string][]*corev1.Pod, error) {
	list := &corev1.PodList{}
	if err := dsc.c.List(ctx, list, client.InNamespace(ds.Namespace)); err != nil {
		return nil, fmt.Errorf("list pods of daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	out := map[string][]*corev1.Pod{}
	for i := range list.Items {
		p := &list.Items[i]
		if ref := metav1.GetControllerOfNoCopy(p); ref == nil || ref.UID != ds.UID {
			continue
		}
		if !includeDeletedTerminal && isPodTerminal(p) && p.DeletionTimestamp != nil {
			continue
		}
		if node := targetNodeName(p); node != "" {
			out[node] = append(out[node], p)
		}
	}
	return out, nil
}

// targetNodeName mirrors util.GetTargetNodeName: spec.nodeName, else the
// node named by the required node affinity's metadata.name field (what
// syncNodes sets); "" when neither says.
func targetNodeName(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == metav1.ObjectNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// manage mirrors manage: podsShouldBeOnNode for every node, plus pods
// targeting nodes that do not exist, then syncNodes.
func (dsc *daemonSetsController) manage(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string) error {
	nodeToPods, err := dsc.getNodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return err
	}
	var create, del []string
	exists := map[string]bool{}
	for _, n := range nodes {
		exists[n.Name] = true
		c, d := dsc.podsShouldBeOnNode(n, nodeToPods, ds, hash)
		create, del = append(create, c...), append(del, d...)
	}
	// getUnscheduledPodsWithoutNode
	for _, name := range sortedKeys(nodeToPods) {
		if exists[name] {
			continue
		}
		for _, p := range nodeToPods[name] {
			if p.Spec.NodeName == "" {
				del = append(del, p.Name)
			}
		}
	}
	return dsc.syncNodes(ctx, ds, del, create, hash)
}

// podsShouldBeOnNode mirrors podsShouldBeOnNode: a node that should run a
// pod and has none gets one; failed and succeeded pods are deleted;
// without surge all but the oldest running pod go; with surge an old and
// a new pod may coexist until the new one is available (or the old one
// stops being ready); a node that should not run the pod loses them all.
func (dsc *daemonSetsController) podsShouldBeOnNode(node *corev1.Node, nodeToPods map[string][]*corev1.Pod, ds *appsv1.DaemonSet, hash string) (create, del []string) {
	shouldRun, shouldContinueRunning := nodeShouldRunDaemonPod(node, ds)
	pods, exists := nodeToPods[node.Name]
	switch {
	case shouldRun && !exists:
		create = append(create, node.Name)
	case shouldContinueRunning:
		var running []*corev1.Pod
		for _, p := range pods {
			switch {
			case p.DeletionTimestamp != nil:
			case isPodTerminal(p):
				del = append(del, p.Name)
			default:
				running = append(running, p)
			}
		}
		sortPodsByCreationAndPhase(running)
		if !allowsSurge(ds) {
			for _, p := range running[min(1, len(running)):] {
				del = append(del, p.Name)
			}
			break
		}
		if len(running) <= 1 {
			if len(running) == 0 && shouldRun {
				create = append(create, node.Name)
			}
			break
		}
		var oldestNew, oldestOld *corev1.Pod
		for _, p := range running {
			switch {
			case p.Labels[appsv1.ControllerRevisionHashLabelKey] == hash && oldestNew == nil:
				oldestNew = p
			case p.Labels[appsv1.ControllerRevisionHashLabelKey] != hash && oldestOld == nil:
				oldestOld = p
			default:
				del = append(del, p.Name)
			}
		}
		if oldestNew != nil && oldestOld != nil &&
			(!isPodReady(oldestOld) || isPodAvailable(oldestNew, ds.Spec.MinReadySeconds, dsc.s.now)) {
			del = append(del, oldestOld.Name)
		}
	case exists:
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				del = append(del, p.Name)
			}
		}
	}
	return create, del
}

// syncNodes mirrors syncNodes: new pods (the template with the daemon
// tolerations, the controller-revision-hash label and a required node
// affinity to the node, generateName "<ds>-") in slow-start batches that
// stop at a failed batch, then the deletions. Errors are joined.
func (dsc *daemonSetsController) syncNodes(ctx context.Context, ds *appsv1.DaemonSet, del, create []string, hash string) error {
	create, del = create[:min(len(create), burstReplicas)], del[:min(len(del), burstReplicas)]
	var errs []error
	for pos, batch := 0, min(len(create), 1); pos < len(create); pos, batch = pos+batch, min(2*batch, len(create)-(pos+batch)) {
		failed := len(errs)
		for _, node := range create[pos : pos+batch] {
			if err := dsc.createDaemonPod(ctx, ds, node, hash); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) > failed {
			break
		}
	}
	for _, name := range del {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, Name: name}}
		if err := dsc.c.Delete(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete pod %s/%s of daemonset %s: %w", ds.Namespace, name, ds.Name, err))
		}
	}
	return errors.Join(errs...)
}

// createDaemonPod is one create of syncNodes: util.CreatePodTemplate plus
// util.ReplaceDaemonSetPodNodeNameNodeAffinity, created through
// podControl.CreatePods (GetPodFromTemplate).
func (dsc *daemonSetsController) createDaemonPod(ctx context.Context, ds *appsv1.DaemonSet, node, hash string) error {
	t := ds.Spec.Template.DeepCopy()
	addOrUpdateDaemonPodTolerations(&t.Spec)
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = hash
	t.Spec.Affinity = replaceDaemonSetPodNodeNameNodeAffinity(t.Spec.Affinity, node)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ds.Namespace, GenerateName: ds.Name + "-",
			Labels: t.Labels, Annotations: t.Annotations, Finalizers: t.Finalizers,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, daemonSetKind)}},
		Spec: t.Spec,
	}
	if err := dsc.c.Create(ctx, pod); err != nil {
		return fmt.Errorf("create pod for daemonset %s/%s on node %s: %w", ds.Namespace, ds.Name, node, err)
	}
	return nil
}

// updateDaemonSetStatus mirrors updateDaemonSetStatus and
// storeDaemonSetStatus: per node that should run the pod, its oldest pod
// (scheduled first) counts as current, ready, available and updated
// (by hash); a pod on a node that should not run one is misscheduled;
// numberUnavailable = desired - available. Nothing is written when
// nothing changed and the generation is observed; a conflict is retried on
// a fresh read. It returns the minReadySeconds re-check delay (0: none).
func (dsc *daemonSetsController) updateDaemonSetStatus(ctx context.Context, ds *appsv1.DaemonSet, nodes []*corev1.Node, hash string, updateObservedGen bool) (time.Duration, error) {
	nodeToPods, err := dsc.getNodesToDaemonPods(ctx, ds, false)
	if err != nil {
		return 0, err
	}
	now := dsc.s.now
	var st appsv1.DaemonSetStatus
	for _, n := range nodes {
		shouldRun, _ := nodeShouldRunDaemonPod(n, ds)
		pods := nodeToPods[n.Name]
		if !shouldRun {
			if len(pods) > 0 {
				st.NumberMisscheduled++
			}
			continue
		}
		st.DesiredNumberScheduled++
		if len(pods) == 0 {
			continue
		}
		st.CurrentNumberScheduled++
		sortPodsByCreationAndPhase(pods)
		p := pods[0]
		if isPodReady(p) {
			st.NumberReady++
			if isPodAvailable(p, ds.Spec.MinReadySeconds, now) {
				st.NumberAvailable++
			}
		}
		if p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == hash {
			st.UpdatedNumberScheduled++
		}
	}
	st.NumberUnavailable = st.DesiredNumberScheduled - st.NumberAvailable
	var requeue time.Duration
	if ds.Spec.MinReadySeconds > 0 && st.NumberReady != st.NumberAvailable {
		requeue = timeDuration(ds.Spec.MinReadySeconds)
	}
	return requeue, dsc.storeDaemonSetStatus(ctx, ds, st, updateObservedGen)
}

// storeDaemonSetStatus mirrors storeDaemonSetStatus (StatusUpdateRetries = 1).
func (dsc *daemonSetsController) storeDaemonSetStatus(ctx context.Context, ds *appsv1.DaemonSet, st appsv1.DaemonSetStatus, updateObservedGen bool) error {
	cur := ds.Status
	if cur.DesiredNumberScheduled == st.DesiredNumberScheduled && cur.CurrentNumberScheduled == st.CurrentNumberScheduled &&
		cur.NumberMisscheduled == st.NumberMisscheduled && cur.NumberReady == st.NumberReady &&
		cur.UpdatedNumberScheduled == st.UpdatedNumberScheduled && cur.NumberAvailable == st.NumberAvailable &&
		cur.NumberUnavailable == st.NumberUnavailable && cur.ObservedGeneration >= ds.Generation {
		return nil
	}
	toUpdate := ds.DeepCopy()
	for attempt := 0; ; attempt++ {
		if updateObservedGen {
			toUpdate.Status.ObservedGeneration = ds.Generation
		}
		toUpdate.Status.DesiredNumberScheduled, toUpdate.Status.CurrentNumberScheduled = st.DesiredNumberScheduled, st.CurrentNumberScheduled
		toUpdate.Status.NumberMisscheduled, toUpdate.Status.NumberReady = st.NumberMisscheduled, st.NumberReady
		toUpdate.Status.UpdatedNumberScheduled, toUpdate.Status.NumberAvailable = st.UpdatedNumberScheduled, st.NumberAvailable
		toUpdate.Status.NumberUnavailable = st.NumberUnavailable
		err := dsc.c.Status().Update(ctx, toUpdate)
		if err == nil {
			return nil
		}
		if attempt >= 1 {
			return fmt.Errorf("error storing status for daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
		}
		if err := dsc.c.Get(ctx, client.ObjectKeyFromObject(ds), toUpdate); err != nil {
			return fmt.Errorf("re-read daemonset %s/%s: %w", ds.Namespace, ds.Name, err)
		}
	}
}

// nodeShouldRunDaemonPod mirrors nodeShouldRunDaemonPod (see the type's
// simplifications): (shouldRun, shouldContinueRunning).
func nodeShouldRunDaemonPod(node *corev1.Node, ds *appsv1.DaemonSet) (bool, bool) {
	spec := ds.Spec.Template.Spec
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return false, false
	}
	if !labels.SelectorFromSet(spec.NodeSelector).Matches(labels.Set(node.Labels)) {
		return false, false
	}
	addOrUpdateDaemonPodTolerations(&spec)
	untolerated := func(effects ...corev1.TaintEffect) bool {
		for _, t := range node.Spec.Taints {
			for _, e := range effects {
				if t.Effect == e && !tolerates(spec.Tolerations, &t) {
					return true
				}
			}
		}
		return false
	}
	if untolerated(corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute) {
		return false, !untolerated(corev1.TaintEffectNoExecute)
	}
	return true, true
}

func tolerates(ts []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range ts {
		if ts[i].ToleratesTaint(logr.Discard(), taint, false) {
			return true
		}
	}
	return false
}

// addOrUpdateDaemonPodTolerations mirrors util.AddOrUpdateDaemonPodTolerations.
func addOrUpdateDaemonPodTolerations(spec *corev1.PodSpec) {
	add := func(key string, effect corev1.TaintEffect) {
		t := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect}
		for i := range spec.Tolerations {
			if spec.Tolerations[i].MatchToleration(&t) {
				spec.Tolerations[i] = t
				return
			}
		}
		spec.Tolerations = append(spec.Tolerations, t)
	}
	add(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeDiskPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeMemoryPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodePIDPressure, corev1.TaintEffectNoSchedule)
	add(corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)
	}
}

// replaceDaemonSetPodNodeNameNodeAffinity mirrors
// util.ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity
// becomes "metadata.name In [node]".
func replaceDaemonSetPodNodeNameNodeAffinity(a *corev1.Affinity, node string) *corev1.Affinity {
	sel := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
		{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}
	if a == nil {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}
	}
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = sel
	return a
}

// sortPodsByCreationAndPhase mirrors podByCreationTimestampAndPhase:
// scheduled pods first, then oldest first, then by name.
func sortPodsByCreationAndPhase(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if (a.Spec.NodeName != "") != (b.Spec.NodeName != "") {
			return a.Spec.NodeName != ""
		}
		if a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.Name < b.Name
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	})
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mapNodeToDaemonSets enqueues every DaemonSet when a node changes
// (addNode / updateNode enqueue the DaemonSets that should run on it; the
// model lets each sync decide).
func (dsc *daemonSetsController) mapNodeToDaemonSets(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &appsv1.DaemonSetList{}
	if err := dsc.c.List(ctx, list); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, ds := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ds.Namespace, Name: ds.Name}})
	}
	return reqs
}
