package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/platform/deploy"
)

// patchStatus writes st to the status subresource, when it differs from
// what was read. It is a whole-status update carrying the resourceVersion
// that was read (a stale read conflicts and is retried): a merge patch
// computed against the read object would drop fields the stored object
// lacks but the read one shows with their zero values (deployPlan.dryRun).
func (r *UpgradeReconciler) patchStatus(ctx context.Context, u *v1alpha1.Upgrade, st v1alpha1.UpgradeStatus) error {
	if apiequality.Semantic.DeepEqual(u.Status, st) {
		return nil
	}
	next := u.DeepCopy()
	next.Status = st
	if err := r.Client.Status().Update(ctx, next); err != nil {
		return fmt.Errorf("update status of upgrade %s: %w", u.Name, err)
	}
	return nil
}

// emit sends the decision's events, after its status was written.
func (r *UpgradeReconciler) emit(u *v1alpha1.Upgrade, evs []deploy.Event) {
	if r.Recorder == nil {
		return
	}
	for _, e := range evs {
		typ := corev1.EventTypeNormal
		if e.Warning {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(u, nil, typ, e.Reason, "Reconcile", "%s", e.Message)
	}
}
