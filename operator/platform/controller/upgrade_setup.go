package controller

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

// SetupWithManager registers the controller (spec changes wake it; the
// status it writes does not, polling does the rest) and the bootstrap.
func (r *UpgradeReconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Upgrade{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("upgrade").
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up the upgrade controller: %w", err)
	}
	if err := mgr.Add(&Bootstrap{Client: mgr.GetClient(), VIM: r.VIM}); err != nil {
		return fmt.Errorf("add the system upgrade bootstrap: %w", err)
	}
	return nil
}
