package simrun

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
)

// ModeledKinds names the kinds the simulator models, for the error on a
// manifest of an unknown kind (manifests.Options.Kinds).
const ModeledKinds = "the simulator models Namespace (apiVersion v1), Deployment, StatefulSet, DaemonSet and ControllerRevision (apps/v1) and ApplicationUpgrade (upgrades.lunadas.dev/v1alpha1 or v1beta1): fix the kind or apiVersion"

// Admission returns a check (manifests.Options.Check) that refuses what
// the API server's validating webhook would refuse when the objects are
// applied in order: each ApplicationUpgrade (a v1alpha1 one converted to
// v1beta1, as the webhook's matchPolicy Equivalent does) goes through
// webhook.Check against the upgrades admitted before it. Other objects
// pass if the simulator models them or lists them as inert (CheckKind). A Deployment that does not exist is not an admission error (the
// controller reports it).
func Admission() func(client.Object) error {
	var admitted []upgradesv1beta1.ApplicationUpgrade
	return func(obj client.Object) error {
		var u upgradesv1beta1.ApplicationUpgrade
		switch o := obj.(type) {
		case *upgradesv1beta1.ApplicationUpgrade:
			o.DeepCopyInto(&u)
		case *upgradesv1alpha1.ApplicationUpgrade:
			if err := o.DeepCopy().ConvertTo(&u); err != nil {
				return err
			}
		default:
			return CheckKind(obj)
		}
		if err := webhook.Check(nil, &u, admitted); err != nil {
			return fmt.Errorf("applicationupgrade %s/%s refused at admission: %w", u.Namespace, u.Name, err)
		}
		admitted = append(admitted, u)
		return nil
	}
}
