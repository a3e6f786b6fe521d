// Package webhook is the validating admission webhook for Upgrade
// (upgrade.starlingx.io/v1alpha1). Every manager replica serves it, over
// TLS; the rules read the stored `system` Upgrade's status (the catalog and
// system mode the controller observed), so they need no client.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/lunadas/upgrade-operator/operator/api/starlingx/v1alpha1"
)

// +kubebuilder:webhook:path=/validate-upgrade-starlingx-io-v1alpha1-upgrade,mutating=false,failurePolicy=fail,sideEffects=None,groups=upgrade.starlingx.io,resources=upgrades,verbs=create;update;delete,versions=v1alpha1,name=vupgrade.upgrade.starlingx.io,admissionReviewVersions=v1

// Validator admits Upgrades:
//   - create: only `system`; rollbackPolicy snapshot only on AIO-SX. The
//     catalog rules do not apply on create: the operator creates `system`
//     from the live system, before any status exists.
//   - update: a spec.release change must name an uploaded, deployable
//     product release, a Kubernetes version it supports that is not
//     unavailable, and for a major upgrade an uploaded, deployable entry
//     point (the new major's GA); while a deployment runs
//     (status.activeDeploy.status Deploying) only an abort back to
//     deployFromRelease. Switching rollbackPolicy to snapshot needs AIO-SX.
//   - delete: `system` cannot be deleted.
//
// All checks read the stored object's status; the system mode comes from
// System (StatusSystemInfo when nil).
type Validator struct {
	System SystemInfo
}

var _ admission.Validator[*v1alpha1.Upgrade] = &Validator{}

// SetupWithManager registers the webhook with mgr's webhook server.
func (v *Validator) SetupWithManager(mgr ctrl.Manager) error {
	if err := ctrl.NewWebhookManagedBy(mgr, &v1alpha1.Upgrade{}).WithValidator(v).Complete(); err != nil {
		return fmt.Errorf("register the Upgrade validating webhook: %w", err)
	}
	return nil
}

// ValidateCreate implements admission.Validator.
func (v *Validator) ValidateCreate(ctx context.Context, u *v1alpha1.Upgrade) (admission.Warnings, error) {
	if err := checkName(u.Name); err != nil {
		return nil, err
	}
	if u.Spec.DeployPolicy.RollbackPolicy == v1alpha1.RollbackPolicySnapshot {
		return nil, v.checkSnapshot(ctx, nil)
	}
	return nil, nil
}

// ValidateUpdate implements admission.Validator.
func (v *Validator) ValidateUpdate(ctx context.Context, old, updated *v1alpha1.Upgrade) (admission.Warnings, error) {
	var errs []error
	if old.Spec.Release != updated.Spec.Release {
		errs = append(errs, checkRelease(old, updated))
	}
	if updated.Spec.DeployPolicy.RollbackPolicy == v1alpha1.RollbackPolicySnapshot &&
		old.Spec.DeployPolicy.RollbackPolicy != v1alpha1.RollbackPolicySnapshot {
		errs = append(errs, v.checkSnapshot(ctx, old))
	}
	return nil, joinErrors(errs)
}

// ValidateDelete implements admission.Validator.
func (v *Validator) ValidateDelete(_ context.Context, u *v1alpha1.Upgrade) (admission.Warnings, error) {
	if u.Name == v1alpha1.SystemName {
		return nil, errors.New(msgNoDelete)
	}
	return nil, nil
}

func (v *Validator) checkSnapshot(ctx context.Context, current *v1alpha1.Upgrade) error {
	var info SystemInfo = StatusSystemInfo{}
	if v.System != nil {
		info = v.System
	}
	mode, err := info.SystemMode(ctx, current)
	if err != nil {
		return fmt.Errorf("cannot check rollbackPolicy 'snapshot': the system mode is unknown: %w", err)
	}
	return checkRollback(mode)
}

// joinErrors joins the non-nil errors into one, "; "-separated.
func joinErrors(errs []error) error {
	var msgs []string
	for _, err := range errs {
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}
