package cluster

import (
	"context"

	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
)

// admissionClient is the simulator's stand-in for the API server's
// admission chain in front of ApplicationUpgrades: a create or update is
// refused exactly as the validating webhook refuses it on a real cluster —
// the same decision, webhook.Check (the graph: a cycle, an unknown
// dependsOn, a self-dependency, a Deployment twice; and the overlap guard
// against the other upgrades), and the API server's denial (403, "admission
// webhook … denied the request: …"). v1alpha1 objects are judged as their
// v1beta1 conversion (matchPolicy Equivalent), and a v1alpha1 write must
// also pass v1alpha1.AlphaWriteError (the webhook reads the request's
// requestKind). Patches are not intercepted. Only the user's client goes
// through it: the operator never writes an upgrade's spec.
type admissionClient struct {
	client.Client
}

func (c admissionClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.admit(ctx, obj, false); err != nil {
		return err
	}
	return c.Client.Create(ctx, obj, opts...)
}

func (c admissionClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.admit(ctx, obj, true); err != nil {
		return err
	}
	return c.Client.Update(ctx, obj, opts...)
}

// WebhookName is the validating webhook's name as the API server quotes it.
const WebhookName = "vapplicationupgrade.upgrades.lunadas.dev"

// admit returns the refusal of obj as the API server reports a webhook's
// denial, or nil.
func (c admissionClient) admit(ctx context.Context, obj client.Object, update bool) error {
	hub, err := toHub(obj)
	if hub == nil || err != nil {
		return err
	}
	var old *upgradesv1beta1.ApplicationUpgrade
	if update {
		old = &upgradesv1beta1.ApplicationUpgrade{}
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(hub), old); err != nil {
			return err
		}
		if hub.DeletionTimestamp != nil {
			if equality.Semantic.DeepEqual(old.Spec, hub.Spec) {
				return nil
			}
			// as the webhook's ValidateUpdate: a deleting upgrade's spec is frozen
			return denial(webhook.DeletingSpecChange(hub))
		}
		if err := immutableRefs(old, hub); err != nil {
			return err
		}
	}
	if _, alpha := obj.(*upgradesv1alpha1.ApplicationUpgrade); alpha {
		if err := upgradesv1alpha1.AlphaWriteError(old, hub); err != nil {
			return denial(err)
		}
	}
	if old != nil && equality.Semantic.DeepEqual(old.Spec, hub.Spec) {
		return nil
	}
	var others upgradesv1beta1.ApplicationUpgradeList
	if err := c.Client.List(ctx, &others); err != nil {
		return err
	}
	return denial(webhook.Check(old, hub, others.Items))
}

// denial is a webhook's refusal as the API server reports it, or nil: 422
// Invalid when the webhook answered so (an object wrong in itself), else
// 403 Forbidden.
func denial(err error) error {
	if err == nil {
		return nil
	}
	code, reason := int32(403), metav1.StatusReasonForbidden
	if apierrors.IsInvalid(err) {
		code, reason = 422, metav1.StatusReasonInvalid
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason,
		Message: fmt.Sprintf("admission webhook %q denied the request: %v", WebhookName, err)}}
}

// toHub is obj as a v1beta1 ApplicationUpgrade, or nil for other kinds.
func toHub(obj client.Object) (*upgradesv1beta1.ApplicationUpgrade, error) {
	switch o := obj.(type) {
	case *upgradesv1beta1.ApplicationUpgrade:
		return o, nil
	case *upgradesv1alpha1.ApplicationUpgrade:
		hub := &upgradesv1beta1.ApplicationUpgrade{}
		if err := o.DeepCopy().ConvertTo(hub); err != nil {
			return nil, err
		}
		return hub, nil
	}
	return nil, nil
}

// immutableRefs is the CRD's CEL rule `self == oldSelf` on
// spec.components[].deploymentRef (and v1alpha1's spec.worker/api), which
// the simulator's store does not evaluate: a component (by name) whose
// Deployment reference changed is refused as the API server refuses it
// (422 Invalid, the rule's message).
func immutableRefs(old, u *upgradesv1beta1.ApplicationUpgrade) error {
	for _, c := range u.Spec.Components {
		for _, o := range old.Spec.Components {
			if o.Name == c.Name && o.WorkloadRef != nil && c.WorkloadRef != nil && *o.WorkloadRef != *c.WorkloadRef {
				return apierrors.NewInvalid(upgradesv1beta1.GroupVersion.WithKind("ApplicationUpgrade").GroupKind(), u.Name, field.ErrorList{
					field.Invalid(field.NewPath("spec", "components").Key(c.Name).Child("workloadRef"), *c.WorkloadRef,
						"workloadRef is immutable: which workload an upgrade drives cannot change once created; delete this ApplicationUpgrade and create a new one")})
			}
			if o.Name == c.Name && o.DeploymentRef != c.DeploymentRef {
				return apierrors.NewInvalid(upgradesv1beta1.GroupVersion.WithKind("ApplicationUpgrade").GroupKind(), u.Name, field.ErrorList{
					field.Invalid(field.NewPath("spec", "components").Key(c.Name).Child("deploymentRef"), c.DeploymentRef,
						"deploymentRef is immutable: which Deployment an upgrade drives cannot change once created; delete this ApplicationUpgrade and create a new one")})
			}
		}
	}
	return nil
}
