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
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
)

// +kubebuilder:webhook:path=/validate-upgrades-lunadas-dev-v1beta1-applicationupgrade,mutating=false,failurePolicy=fail,sideEffects=None,groups=upgrades.lunadas.dev,resources=applicationupgrades,verbs=create;update,versions=v1beta1,name=vapplicationupgrade.upgrades.lunadas.dev,admissionReviewVersions=v1,matchPolicy=Equivalent

// The overlap guard lists every ApplicationUpgrade.
// +kubebuilder:rbac:groups=upgrades.lunadas.dev,resources=applicationupgrades,verbs=get;list;watch
// The requester's rights are checked with SubjectAccessReviews.
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Validator admits ApplicationUpgrades (v1beta1, and v1alpha1 converted —
// including what the conversion-data annotation restores, since the
// request arrives as the converted v1beta1 object):
//   - the component graph and every image (appupgrade.Validate);
//   - no workload outside the upgrade's namespace unless
//     AllowCrossNamespaceRefs (appupgrade.CrossNamespaceRefs);
//   - the requesting user (name, uid, groups, extra) may get and patch
//     every workload (deployments, statefulsets or daemonsets, by the
//     reference's kind) the upgrade names, on create and on every spec
//     change (SpecChanged: a new generation writes every image again; a
//     SubjectAccessReview each, Authorizer);
//   - then each component's container resolves in the workload as the
//     manager's cache holds it (checkContainers);
//   - the overlap guard: no workload (kind, namespace/name) that another
//     active ApplicationUpgrade references (see Active), naming that
//     upgrade only when the requester may see it (Policy.Check).
//
// An object wrong in itself is refused 422 Invalid, missing rights and
// overlaps 403. On update everything is checked only when the spec changed
// and the overlap only for Deployments the update adds, so an upgrade
// admitted before (or created while the webhook was down) can still have
// its metadata (finalizers, labels) changed. An object being deleted may
// change its metadata only (DeletingSpecChange).
type Validator struct {
	// Reader lists the other ApplicationUpgrades (v1beta1) in every
	// namespace; the manager passes its cached client. Listing all and
	// filtering in memory is O(number of upgrades) per admission, which is
	// fine for the tens to hundreds a cluster holds.
	Reader client.Reader
	// Authorizer answers SubjectAccessReviews for the requesting user. Nil
	// skips the rights checks (the simulator, unit tests); the manager
	// always sets it.
	Authorizer Authorizer
	// AllowCrossNamespaceRefs admits Deployments outside the upgrade's
	// namespace (the manager's --allow-cross-namespace-refs).
	AllowCrossNamespaceRefs bool
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

// ValidateCreate checks everything (see Validator).
func (v *Validator) ValidateCreate(ctx context.Context, u *v1beta1.ApplicationUpgrade) (admission.Warnings, error) {
	if err := checkAlphaWrite(ctx, nil, u); err != nil {
		return nil, err
	}
	return nil, v.validate(ctx, nil, u)
}

// ValidateUpdate checks what the update changes (see Validator).
func (v *Validator) ValidateUpdate(ctx context.Context, old, updated *v1beta1.ApplicationUpgrade) (admission.Warnings, error) {
	if err := checkAlphaWrite(ctx, old, updated); err != nil {
		return nil, err
	}
	if !SpecChanged(old, updated) {
		return nil, nil
	}
	if updated.DeletionTimestamp != nil {
		return nil, DeletingSpecChange(updated)
	}
	return nil, v.validate(ctx, old, updated)
}

// DeletingSpecChange is the refusal (422 Invalid) of a spec change of u
// while it is being deleted: the controller no longer acts on it, so a
// changed spec would only show workloads and images nobody checked.
func DeletingSpecChange(u *v1beta1.ApplicationUpgrade) error {
	return invalid(fmt.Sprintf("applicationupgrade %s/%s is being deleted: its spec cannot change (only its metadata, e.g. its finalizers)", u.Namespace, u.Name))
}

// SpecChanged reports whether an update changes updated's spec: its
// metadata.generation moved (the API server bumps it before validating
// admission runs, for any change of the stored spec — also an empty list
// added or removed, which equality.Semantic.DeepEqual of the typed specs
// cannot see, and which starts a new generation that writes every image
// again), or the typed specs differ (callers that do not bump it: unit
// tests, the simulator).
func SpecChanged(old, updated *v1beta1.ApplicationUpgrade) bool {
	return old.Generation != updated.Generation || !equality.Semantic.DeepEqual(old.Spec, updated.Spec)
}

// ValidateDelete admits every delete.
func (v *Validator) ValidateDelete(context.Context, *v1beta1.ApplicationUpgrade) (admission.Warnings, error) {
	return nil, nil
}

// validate runs the checks in an order that discloses nothing: the
// object's own problems first, then the requester's rights on the
// Deployments it names, and only then the overlap with other upgrades.
func (v *Validator) validate(ctx context.Context, old, u *v1beta1.ApplicationUpgrade) error {
	p := Policy{AllowCrossNamespaceRefs: v.AllowCrossNamespaceRefs}
	if msgs := p.static(u); len(msgs) > 0 {
		return invalid(strings.Join(msgs, "; "))
	}
	var user *authenticationv1.UserInfo
	if v.Authorizer != nil {
		req, err := admission.RequestFromContext(ctx)
		if err != nil {
			return fmt.Errorf("cannot authorize applicationupgrade %s/%s: no admission request in context: %w", u.Namespace, u.Name, err)
		}
		user = &req.UserInfo
		if err := v.authorizeDeployments(ctx, *user, old, u); err != nil {
			return err
		}
		if err := v.checkContainers(ctx, u); err != nil {
			return invalid(err.Error())
		}
	}
	others, err := v.others(ctx, u)
	if err != nil {
		return err
	}
	if user != nil {
		p.CanGet = func(namespace, name string) bool {
			ok, _, err := v.Authorizer.Allowed(ctx, *user, upgradeAttributes(namespace, name))
			return err == nil && ok
		}
	}
	return p.Check(old, u, others)
}

// invalid is the webhook's refusal of an object that is wrong in itself
// (its graph, an image, a container): 422 Invalid, as the API server's own
// validation answers (kubectl: "Error from server (Invalid)"), where a
// plain error would be denied as 403 Forbidden; the requester's missing
// rights stay 403.
func invalid(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity,
		Reason: metav1.StatusReasonInvalid, Message: msg}}
}

// checkContainers refuses u when a component's container cannot be
// resolved in the workload as the manager's cache holds it now: no
// containerName on a workload of several containers, or a name the pod
// template does not have (appupgrade.ResolveContainer's message, with the
// container names, and the spec path to fix). It runs only after the
// requester was found allowed to get every workload, so the names tell
// nothing it could not read; a workload the cache does not hold (not
// found, not watched) passes and is checked again when the upgrade runs.
func (v *Validator) checkContainers(ctx context.Context, u *v1beta1.ApplicationUpgrade) error {
	if v.Reader == nil {
		return nil
	}
	req, err := admission.RequestFromContext(ctx)
	alpha := err == nil && req.RequestKind != nil && req.RequestKind.Version == v1alpha1.GroupVersion.Version
	var msgs []string
	for i, c := range u.Spec.Components {
		w := c.Workload(u.Namespace)
		obj, err := appupgrade.NewWorkload(w.Kind)
		if err != nil {
			continue // refused by the static checks already
		}
		if err := v.Reader.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name}, obj); err != nil {
			continue
		}
		field := fmt.Sprintf("spec.components[%d]", i)
		if alpha {
			field = "spec." + c.Name // spec.worker, spec.api
		}
		if _, err := appupgrade.ResolveContainer(w, appupgrade.PodTemplate(obj), c.ContainerName, field); err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "; "))
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

// DeploymentKeys maps each workload u references, as
// v1beta1.WorkloadKey.IndexKey ("namespace/name" for a Deployment,
// "Kind:namespace/name" for a StatefulSet or DaemonSet; an empty reference
// namespace meaning u's), to the component naming it (the first, if
// several do).
func DeploymentKeys(u *v1beta1.ApplicationUpgrade) map[string]string {
	out := map[string]string{}
	for i := range u.Spec.Components {
		c := &u.Spec.Components[i]
		key := c.Workload(u.Namespace).IndexKey()
		if _, ok := out[key]; !ok {
			out[key] = c.Name
		}
	}
	return out
}
