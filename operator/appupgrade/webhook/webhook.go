// Package webhook serves the ApplicationUpgrade webhooks on the manager's
// webhook server: the validating admission webhook (v1beta1; registered with
// matchPolicy Equivalent, so v1alpha1 requests arrive converted to v1beta1)
// and the conversion webhook (/convert) between v1alpha1 and the v1beta1
// hub. It also holds what a process needs to serve /convert outside a
// cluster: a self-signed serving certificate and the CRD's
// spec.conversion pointing at a URL (see local.go).
package webhook

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
)

// +kubebuilder:webhook:path=/validate-upgrades-lunadas-dev-v1beta1-applicationupgrade,mutating=false,failurePolicy=fail,sideEffects=None,groups=upgrades.lunadas.dev,resources=applicationupgrades,verbs=create;update,versions=v1beta1,name=vapplicationupgrade.upgrades.lunadas.dev,admissionReviewVersions=v1,matchPolicy=Equivalent

// The overlap guard lists every ApplicationUpgrade.
// +kubebuilder:rbac:groups=upgrades.lunadas.dev,resources=applicationupgrades,verbs=get;list;watch

// Validator admits ApplicationUpgrades (v1beta1, and v1alpha1 converted):
//   - the component graph: unique names, known dependsOn, no
//     self-dependency, no cycle (the cycle is named), no Deployment twice
//     (an empty namespace meaning the upgrade's own) — appupgrade.Validate;
//   - the overlap guard: no Deployment (namespace/name) that another
//     ApplicationUpgrade references while it is active (see Active).
//
// On update the graph is checked only when the spec changed and the
// overlap only for Deployments the update adds, so an upgrade admitted
// before (or created while the webhook was down) can still have its
// metadata (finalizers, labels) changed. Objects being deleted pass.
type Validator struct {
	// Reader lists the other ApplicationUpgrades (v1beta1) in every
	// namespace; the manager passes its cached client. Listing all and
	// filtering in memory is O(number of upgrades) per admission, which is
	// fine for the tens to hundreds a cluster holds.
	Reader client.Reader
}

var _ admission.Validator[*v1beta1.ApplicationUpgrade] = &Validator{}

// SetupWithManager registers the validating webhook at
// /validate-upgrades-lunadas-dev-v1beta1-applicationupgrade and the
// conversion webhook at /convert (v1beta1 is the Hub, v1alpha1 Convertible:
// both must be in mgr's scheme) with mgr's webhook server.
func (v *Validator) SetupWithManager(mgr ctrl.Manager) error {
	if err := ctrl.NewWebhookManagedBy(mgr, &v1beta1.ApplicationUpgrade{}).WithValidator(v).Complete(); err != nil {
		return fmt.Errorf("register the ApplicationUpgrade validating and conversion webhooks: %w", err)
	}
	return nil
}

// ValidateCreate checks the graph and the overlap with every other upgrade.
func (v *Validator) ValidateCreate(ctx context.Context, u *v1beta1.ApplicationUpgrade) (admission.Warnings, error) {
	if err := checkAlphaWrite(ctx, nil, u); err != nil {
		return nil, err
	}
	others, err := v.others(ctx, u)
	if err != nil {
		return nil, err
	}
	return nil, Check(nil, u, others)
}

// ValidateUpdate checks what the update changes (see Validator).
func (v *Validator) ValidateUpdate(ctx context.Context, old, updated *v1beta1.ApplicationUpgrade) (admission.Warnings, error) {
	if err := checkAlphaWrite(ctx, old, updated); err != nil {
		return nil, err
	}
	if updated.DeletionTimestamp != nil || equality.Semantic.DeepEqual(old.Spec, updated.Spec) {
		return nil, nil
	}
	others, err := v.others(ctx, updated)
	if err != nil {
		return nil, err
	}
	return nil, Check(old, updated, others)
}

// ValidateDelete admits every delete.
func (v *Validator) ValidateDelete(context.Context, *v1beta1.ApplicationUpgrade) (admission.Warnings, error) {
	return nil, nil
}

func (v *Validator) others(ctx context.Context, u *v1beta1.ApplicationUpgrade) ([]v1beta1.ApplicationUpgrade, error) {
	if v.Reader == nil {
		return nil, nil
	}
	var list v1beta1.ApplicationUpgradeList
	if err := v.Reader.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("cannot check applicationupgrade %s/%s for overlapping upgrades: list applicationupgrades: %w (retry; the operator needs list on applicationupgrades)", u.Namespace, u.Name, err)
	}
	return list.Items, nil
}

// Active reports whether o still claims its Deployments: not being
// deleted, and not Completed or Failed for its current generation (a
// terminal phase observed for an older generation does not count: the spec
// changed and the upgrade runs again).
func Active(o *v1beta1.ApplicationUpgrade) bool {
	if o.DeletionTimestamp != nil {
		return false
	}
	return !o.Status.Phase.Terminal() || o.Status.ObservedGeneration < o.Generation
}

// Check is the admission decision, a pure function: nil when u may be
// stored, else one error joining every problem ("; "), each saying what to
// fix. old is nil on create; on update only Deployments that old did not
// reference are checked for overlap. others may include u itself (skipped
// by namespace/name).
func Check(old, u *v1beta1.ApplicationUpgrade, others []v1beta1.ApplicationUpgrade) error {
	var msgs []string
	for _, err := range appupgrade.Validate(u) {
		msgs = append(msgs, err.Error())
	}
	had := map[string]bool{}
	if old != nil {
		for key := range DeploymentKeys(old) {
			had[key] = true
		}
	}
	claimed := map[string]string{} // namespace/name -> "namespace/upgrade"
	for i := range others {
		o := &others[i]
		if (o.Namespace == u.Namespace && o.Name == u.Name) || !Active(o) {
			continue
		}
		for key := range DeploymentKeys(o) {
			if _, ok := claimed[key]; !ok {
				claimed[key] = o.Namespace + "/" + o.Name
			}
		}
	}
	keys := DeploymentKeys(u)
	sorted := make([]string, 0, len(keys))
	for key := range keys {
		sorted = append(sorted, key)
	}
	sort.Strings(sorted)
	for _, key := range sorted {
		if other, ok := claimed[key]; ok && !had[key] {
			msgs = append(msgs, fmt.Sprintf("spec.components[%s]: deployment %s is already being upgraded by applicationupgrade %s: wait until that upgrade is Completed or Failed (or delete it), or remove this component", keys[key], key, other))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
}

// DeploymentKeys maps each Deployment u references, as "namespace/name"
// (an empty reference namespace meaning u's), to the component naming it
// (the first, if several do).
func DeploymentKeys(u *v1beta1.ApplicationUpgrade) map[string]string {
	out := map[string]string{}
	for i := range u.Spec.Components {
		c := &u.Spec.Components[i]
		key := c.DeploymentNamespace(u.Namespace) + "/" + c.DeploymentRef.Name
		if _, ok := out[key]; !ok {
			out[key] = c.Name
		}
	}
	return out
}
