package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// SetupWithManager registers the field index and the watches: the
// ApplicationUpgrades themselves (v1beta1, the storage version; v1alpha1
// objects reach it through the conversion webhook) and, through DeploymentRefIndex, the other
// upgrades of the same workloads (a held upgrade starts as soon as the one
// holding it finishes), Deployments, ReplicaSets, StatefulSets, DaemonSets,
// ControllerRevisions and pods. Pods are watched so that an old pod's
// final deletion wakes the reconciler at once, without polling.
func (r *ApplicationUpgradeReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	return r.SetupWithManagerAs(ctx, mgr, r)
}

// SetupWithManagerAs is SetupWithManager registering outer, a reconciler
// that delegates to r (tests wrap r to record its calls or to weaken it on
// purpose), with r's watches.
func (r *ApplicationUpgradeReconciler) SetupWithManagerAs(ctx context.Context, mgr ctrl.Manager, outer reconcile.Reconciler) error {
	if err := SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	m := Mapper{Reader: mgr.GetClient()}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1beta1.ApplicationUpgrade{}).
		Watches(&v1beta1.ApplicationUpgrade{}, handler.EnqueueRequestsFromMapFunc(m.Upgrade)).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(m.Deployment)).
		Watches(&appsv1.ReplicaSet{}, handler.EnqueueRequestsFromMapFunc(m.ReplicaSet)).
		Watches(&appsv1.StatefulSet{}, handler.EnqueueRequestsFromMapFunc(m.StatefulSet)).
		Watches(&appsv1.DaemonSet{}, handler.EnqueueRequestsFromMapFunc(m.DaemonSet)).
		Watches(&appsv1.ControllerRevision{}, handler.EnqueueRequestsFromMapFunc(m.ControllerRevision)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(m.Pod)).
		Named("applicationupgrade").
		Complete(outer)
}
