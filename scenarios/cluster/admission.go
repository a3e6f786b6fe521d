package cluster

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
)

// admissionClient is the simulator's stand-in for the API server's
// admission chain in front of ApplicationUpgrades: a create or update is
// refused, as the validating webhook refuses it on a real cluster, when
// appupgrade.Validate — the check that webhook runs — finds the graph
// unusable (a cycle, an unknown dependsOn, a self-dependency, a Deployment
// twice). v1alpha1 objects are judged as their v1beta1 conversion.
// Only the user's client goes through it: the operator never writes an
// upgrade's spec.
type admissionClient struct {
	client.Client
}

func (c admissionClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := admit(obj); err != nil {
		return err
	}
	return c.Client.Create(ctx, obj, opts...)
}

func (c admissionClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := admit(obj); err != nil {
		return err
	}
	return c.Client.Update(ctx, obj, opts...)
}

// admit returns the refusal of obj as an Invalid status error, or nil.
func admit(obj client.Object) error {
	var hub *upgradesv1beta1.ApplicationUpgrade
	switch o := obj.(type) {
	case *upgradesv1beta1.ApplicationUpgrade:
		hub = o
	case *upgradesv1alpha1.ApplicationUpgrade:
		hub = &upgradesv1beta1.ApplicationUpgrade{}
		if err := o.ConvertTo(hub); err != nil {
			return err
		}
	default:
		return nil
	}
	errs := appupgrade.Validate(hub)
	if len(errs) == 0 {
		return nil
	}
	var list field.ErrorList
	for _, err := range errs {
		list = append(list, field.Invalid(field.NewPath("spec", "components"), len(hub.Spec.Components), err.Error()))
	}
	gk := upgradesv1beta1.GroupVersion.WithKind("ApplicationUpgrade").GroupKind()
	return apierrors.NewInvalid(gk, hub.Name, list)
}
