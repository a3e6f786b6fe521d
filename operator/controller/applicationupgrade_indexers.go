package controller

import (
	"context"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// DeploymentRefIndex is the field index on ApplicationUpgrades holding the
// workloads their components reference, each as v1beta1.WorkloadKey.IndexKey:
// "namespace/name" for a Deployment, "StatefulSet:namespace/name" and
// "DaemonSet:namespace/name" for the other kinds (a reference without a
// namespace means the upgrade's own). It turns a workload, ReplicaSet,
// ControllerRevision or pod event into the upgrades to reconcile without
// listing every upgrade, across namespaces.
const DeploymentRefIndex = "spec.components.deploymentRef"

// deploymentRefs is the DeploymentRefIndex extractor: the index key of
// every component's workload, in spec order.
func deploymentRefs(obj client.Object) []string {
	u, ok := obj.(*v1beta1.ApplicationUpgrade)
	if !ok {
		return nil
	}
	refs := make([]string, 0, len(u.Spec.Components))
	for i := range u.Spec.Components {
		c := &u.Spec.Components[i]
		refs = append(refs, c.Workload(u.Namespace).IndexKey())
	}
	return refs
}

// SetupIndexes registers DeploymentRefIndex with indexer (a manager's field
// indexer, or the simulator's). It returns the indexer's error.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &v1beta1.ApplicationUpgrade{}, DeploymentRefIndex, deploymentRefs)
}

// Mapper turns events of workloads (Deployments, StatefulSets,
// DaemonSets), ReplicaSets, ControllerRevisions and pods into requests for
// the ApplicationUpgrades that reference their workload, through
// DeploymentRefIndex. Reader is the cached client.
type Mapper struct {
	Reader client.Reader
}

// upgradesFor lists the upgrades (in any namespace) referencing Deployment namespace/name.
func (m Mapper) upgradesFor(ctx context.Context, namespace, name string) []reconcile.Request {
	return m.upgradesOf(ctx, v1beta1.WorkloadKey{Kind: v1beta1.KindDeployment, Namespace: namespace, Name: name}.IndexKey())
}

// upgradesOf lists the upgrades (in any namespace) referencing the
// workload of index key key. The list holds the cache's objects, not
// copies (client.UnsafeDisableDeepCopy): only their names are read.
func (m Mapper) upgradesOf(ctx context.Context, key string) []reconcile.Request {
	list := getUpgradeList()
	defer upgradeListPool.Put(list)
	if err := m.Reader.List(ctx, list, refListOptions(key)); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, u := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: u.Namespace, Name: u.Name}})
	}
	return reqs
}

// Upgrade maps an ApplicationUpgrade event to the other upgrades that
// reference one of its Deployments: an upgrade held by an older one
// (ClaimedBy) is reconciled when that one changes — completes, fails or is
// deleted — instead of waiting for an unrelated Deployment or pod event.
func (m Mapper) Upgrade(ctx context.Context, obj client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	seen := map[types.NamespacedName]bool{{Namespace: obj.GetNamespace(), Name: obj.GetName()}: true}
	for _, key := range deploymentRefs(obj) {
		for _, r := range m.upgradesOf(ctx, key) {
			if !seen[r.NamespacedName] {
				seen[r.NamespacedName] = true
				reqs = append(reqs, r)
			}
		}
	}
	return reqs
}

// Deployment maps a Deployment event.
func (m Mapper) Deployment(ctx context.Context, obj client.Object) []reconcile.Request {
	return m.upgradesFor(ctx, obj.GetNamespace(), obj.GetName())
}

// ReplicaSet maps a ReplicaSet event through its controlling Deployment.
func (m Mapper) ReplicaSet(ctx context.Context, obj client.Object) []reconcile.Request {
	if ref := controllerOf(obj, "Deployment"); ref != "" {
		return m.upgradesFor(ctx, obj.GetNamespace(), ref)
	}
	return nil
}

// StatefulSet maps a StatefulSet event.
func (m Mapper) StatefulSet(ctx context.Context, obj client.Object) []reconcile.Request {
	return m.upgradesOf(ctx, workloadKey(v1beta1.KindStatefulSet, obj.GetNamespace(), obj.GetName()))
}

// DaemonSet maps a DaemonSet event.
func (m Mapper) DaemonSet(ctx context.Context, obj client.Object) []reconcile.Request {
	return m.upgradesOf(ctx, workloadKey(v1beta1.KindDaemonSet, obj.GetNamespace(), obj.GetName()))
}

// ControllerRevision maps a ControllerRevision event through its
// controlling DaemonSet (whose current revision's hash tells its new
// pods); a StatefulSet's revisions are named in its status and need no watch.
func (m Mapper) ControllerRevision(ctx context.Context, obj client.Object) []reconcile.Request {
	if ds := controllerOf(obj, "DaemonSet"); ds != "" {
		return m.upgradesOf(ctx, workloadKey(v1beta1.KindDaemonSet, obj.GetNamespace(), ds))
	}
	return nil
}

func workloadKey(kind v1beta1.WorkloadKind, namespace, name string) string {
	return v1beta1.WorkloadKey{Kind: kind, Namespace: namespace, Name: name}.IndexKey()
}

// Pod maps a pod event to the upgrades of its workload: through its
// controlling StatefulSet or DaemonSet, or its controlling ReplicaSet to
// the Deployment (the ReplicaSet's name is "<deployment>-<pod-template-hash>"),
// so a pod's deletion wakes the upgrade without any polling.
func (m Mapper) Pod(ctx context.Context, obj client.Object) []reconcile.Request {
	if sts := controllerOf(obj, "StatefulSet"); sts != "" {
		return m.upgradesOf(ctx, workloadKey(v1beta1.KindStatefulSet, obj.GetNamespace(), sts))
	}
	if ds := controllerOf(obj, "DaemonSet"); ds != "" {
		return m.upgradesOf(ctx, workloadKey(v1beta1.KindDaemonSet, obj.GetNamespace(), ds))
	}
	rs := controllerOf(obj, "ReplicaSet")
	hash := obj.GetLabels()[appsv1.DefaultDeploymentUniqueLabelKey]
	if rs == "" || hash == "" || len(rs) <= len(hash)+1 || rs[len(rs)-len(hash)-1:] != "-"+hash {
		return nil
	}
	return m.upgradesFor(ctx, obj.GetNamespace(), rs[:len(rs)-len(hash)-1])
}

func controllerOf(obj client.Object, kind string) string {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller && ref.Kind == kind {
			return ref.Name
		}
	}
	return ""
}

// StripPod is the pod cache transform: it keeps what Assess reads (metadata
// labels, owner references, deletion timestamp, phase, conditions and
// container statuses) and drops the spec and managed fields, which are most
// of a pod's size.
func StripPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	p.ManagedFields = nil
	p.Annotations = nil
	p.Spec = corev1.PodSpec{NodeName: p.Spec.NodeName}
	return p, nil
}

// upgradeListPool holds ApplicationUpgrade lists for the readers that keep
// nothing of a list's items past their call (upgradesOf, claimedBy,
// supersededBy), as assessListPool does for assess: a reader that fills
// an empty Items with room in place allocates no items array per call
// (controller-runtime's cache reader makes a new one; nothing changes
// there).
var upgradeListPool = sync.Pool{New: func() any { return new(v1beta1.ApplicationUpgradeList) }}

// getUpgradeList is a list from upgradeListPool, its Items emptied.
func getUpgradeList() *v1beta1.ApplicationUpgradeList {
	l := upgradeListPool.Get().(*v1beta1.ApplicationUpgradeList)
	l.Items = l.Items[:0]
	return l
}

// refListOptions lists the upgrades referencing the workload of index key
// key, read shared: client.MatchingFields{DeploymentRefIndex: key} and
// client.UnsafeDisableDeepCopy as one option, the field selector built as
// MatchingFields builds a one-entry one (fields.Set.AsSelector returns the
// single term fields.OneTermEqualSelector makes) without its map.
func refListOptions(key string) *client.ListOptions {
	return &client.ListOptions{FieldSelector: fields.OneTermEqualSelector(DeploymentRefIndex, key), UnsafeDisableDeepCopy: &unsafeDisableDeepCopy}
}
