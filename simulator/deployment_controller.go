package simulator

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// deploymentController models kube-controller-manager's Deployment
// controller (pkg/controller/deployment): syncDeployment dispatches to a
// status-only sync (deleted Deployment), the scaling path (paused, or a
// scaling event: no progress estimation), Recreate or RollingUpdate.
//
// Like the real one, it keeps using the Deployment it read after writing
// its status once in a sync (getNewReplicaSet), so the second status write
// of that sync fails with a 409 Conflict and the sync is retried after the
// work queue's back-off.
//
// Not modelled: adoption / orphaning of ReplicaSets by selector
// (ownership is the controller reference alone), rollback
// (spec.rollbackTo is long gone from apps/v1), events.
type deploymentController struct {
	s *Sim
	c *simClient
	// terminatingReplicas is the DeploymentReplicaSetTerminatingReplicas gate.
	terminatingReplicas bool
	// ctrl is the controller running this model, whose queue
	// requeueStuckDeployment adds to directly, as the real one does.
	ctrl *Controller
	// templates remembers which ReplicaSet templates equal which
	// Deployment templates (templateMatch)
	templates templateMatch
	// read is the Deployment a sync reads into, reused by the next sync:
	// nothing keeps it past its sync (syncs never overlap), the writes
	// copy what they send.
	read appsv1.Deployment
}

func (dc *deploymentController) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return reconcile.Result{}, dc.syncDeployment(ctx, req.NamespacedName)
}

func (dc *deploymentController) syncDeployment(ctx context.Context, key types.NamespacedName) error {
	// Read shared, as syncDeployment reads dLister.Deployments(ns).Get: a
	// shallow copy of the stored object. Upstream then takes
	// deployment.DeepCopy(); the model copies only what it changes in
	// place — the annotations map (setDeploymentRevision copies it before
	// writing) — and otherwise replaces d's own fields (d.Status, its
	// conditions slice, its collision count) as wholes; CheckSharedReads
	// checks that the stored object is left as it was. d is the
	// controller's reused read (dc.read), one allocation less per sync.
	d := &dc.read
	*d = appsv1.Deployment{}
	if err := dc.c.Get(ctx, key, d, &client.GetOptions{UnsafeDisableDeepCopy: ptr.To(true)}); err != nil {
		return client.IgnoreNotFound(err)
	}
	if sel := d.Spec.Selector; sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			_ = dc.updateStatus(ctx, d)
		}
		return nil
	}
	rsList, err := dc.replicaSetsFor(ctx, d)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return dc.syncStatusOnly(ctx, d, rsList)
	}
	if err := dc.checkPausedConditions(ctx, d); err != nil {
		return err
	}
	if d.Spec.Paused || dc.isScalingEvent(d, rsList) {
		return dc.sync(ctx, d, rsList)
	}
	switch d.Spec.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		pods, err := dc.podsByReplicaSet(ctx, d, rsList)
		if err != nil {
			return err
		}
		return dc.rolloutRecreate(ctx, d, rsList, pods)
	case appsv1.RollingUpdateDeploymentStrategyType:
		return dc.rolloutRolling(ctx, d, rsList)
	}
	return fmt.Errorf("deployment %s/%s: unexpected strategy type %q", d.Namespace, d.Name, d.Spec.Strategy.Type)
}

// replicaSetsFor lists the Deployment's ReplicaSets (controller reference
// to it), oldest first: shared, read-only, as from the informer's lister
// (rsLister in getReplicaSetsForDeployment); changes go to a DeepCopy.
func (dc *deploymentController) replicaSetsFor(ctx context.Context, d *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	list, err := dc.c.listReplicaSetsShared(d.Namespace)
	if err != nil {
		return nil, fmt.Errorf("list replicasets of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	// Filtered in place: the typed list is this call's own slice (the
	// objects in it are shared, the slice is not).
	out := list[:0]
	for _, rs := range list {
		if ref := metav1.GetControllerOfNoCopy(rs); ref != nil && ref.UID == d.UID {
			out = append(out, rs)
		}
	}
	if len(out) == 0 {
		out = nil // as the append to a nil slice left it
	}
	rsByCreation(out)
	return out, nil
}

// podsByReplicaSet lists the pods of each of the ReplicaSets, terminating
// ones included (getPodMapForDeployment).
func (dc *deploymentController) podsByReplicaSet(ctx context.Context, d *appsv1.Deployment, rsList []*appsv1.ReplicaSet) (map[types.UID][]*corev1.Pod, error) {
	pods, err := dc.c.listPodsShared(d.Namespace)
	if err != nil {
		return nil, fmt.Errorf("list pods of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	m := map[types.UID][]*corev1.Pod{}
	for _, rs := range rsList {
		m[rs.UID] = nil
	}
	for _, p := range pods {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil {
			continue
		}
		if _, ok := m[ref.UID]; ok {
			m[ref.UID] = append(m[ref.UID], p)
		}
	}
	return m, nil
}

// mapDeletedPod wakes a Recreate Deployment when one of its pods is gone
// (deletePod): pod → its ReplicaSet → its Deployment.
func (dc *deploymentController) mapDeletedPod(_ context.Context, obj client.Object) []reconcile.Request {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return nil
	}
	rs, _ := dc.s.store.get(appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}).(*appsv1.ReplicaSet)
	if rs == nil || rs.UID != ref.UID {
		return nil
	}
	dref := metav1.GetControllerOfNoCopy(rs)
	if dref == nil || dref.Kind != "Deployment" {
		return nil
	}
	key := types.NamespacedName{Namespace: rs.Namespace, Name: dref.Name}
	d, _ := dc.s.store.get(appsv1.SchemeGroupVersion.WithKind("Deployment"), key).(*appsv1.Deployment)
	if d == nil || d.UID != dref.UID || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		return nil
	}
	return []reconcile.Request{{NamespacedName: key}}
}

// updateStatus writes d's status (UpdateStatus), dropping the answer as
// kubernetes/kubernetes pkg/controller/deployment/sync.go syncRolloutStatus
// and syncDeploymentStatus do (`_, err = dc.client.AppsV1().Deployments(ns).UpdateStatus(...)`).
// Like client-go's, it leaves d as it was: d keeps the resourceVersion it
// was read with (the store reads d and copies what it keeps).
func (dc *deploymentController) updateStatus(_ context.Context, d *appsv1.Deployment) error {
	if err := dc.c.updateStatusDropAnswer(d); err != nil {
		return fmt.Errorf("update status of deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	return nil
}
