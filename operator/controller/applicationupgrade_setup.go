package controller

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// SetupWithManager registers the field index and the watches (Mapper.Watches, with their predicates): the
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
	ws := Mapper{Reader: mgr.GetClient()}.Watches()
	b := ctrl.NewControllerManagedBy(mgr).For(ws[0].Object, builder.WithPredicates(ws[0].Predicate))
	for _, w := range ws[1:] {
		var opts []builder.WatchesOption
		if w.Predicate != nil {
			opts = append(opts, builder.WithPredicates(w.Predicate))
		}
		b = b.Watches(w.Object, handler.EnqueueRequestsFromMapFunc(w.Map), opts...)
	}
	return b.Named("applicationupgrade").Complete(outer)
}
