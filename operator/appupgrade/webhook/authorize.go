package webhook

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
)

// Authorizer decides whether a user may perform a request, as the API
// server's authorizer would.
type Authorizer interface {
	// Allowed reports whether user may do attrs, with the authorizer's
	// reason when it gives one; an error means no decision was made.
	Allowed(ctx context.Context, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (bool, string, error)
}

// SubjectAccessReviewer is the Authorizer that creates a
// SubjectAccessReview (authorization.k8s.io/v1) for the user — name, uid,
// groups and extra, as the admission request carries them — the way
// kube-apiserver's own webhook authorizer and kubectl auth can-i ask
// (kubernetes/kubernetes staging/src/k8s.io/apiserver/plugin/pkg/authorizer/webhook).
// The manager needs create on subjectaccessreviews (cluster-scoped).
type SubjectAccessReviewer struct {
	// Client creates the reviews (the manager's client).
	Client client.Client
}

// Allowed creates one SubjectAccessReview and returns its status.
func (s SubjectAccessReviewer) Allowed(ctx context.Context, user authenticationv1.UserInfo, attrs authorizationv1.ResourceAttributes) (bool, string, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra, ResourceAttributes: &attrs,
	}}
	if err := s.Client.Create(ctx, sar); err != nil {
		return false, "", fmt.Errorf("create subjectaccessreview: %w", err)
	}
	return sar.Status.Allowed && !sar.Status.Denied, sar.Status.Reason, nil
}

// DeploymentVerbs are what the author of an upgrade must be allowed to do
// on each workload it references (deployments, statefulsets or
// daemonsets): the operator reads and patches it.
var DeploymentVerbs = []string{"get", "patch"}

// authorizeDeployments refuses u unless user may get and patch every
// workload u references — on create, and on every update that changes the
// spec — one SubjectAccessReview per verb and workload, on the
// reference's resource (deployments, statefulsets, daemonsets). Any spec
// change is a new generation, which the operator runs from Pending and
// which writes every component's image again, so the requester answers for
// all of them, not only for the components it adds or changes: removing a
// component, or changing spec.serviceAccountName, would otherwise make the
// operator write images into workloads the requester may not touch. The
// refusal names each denied verb, resource, namespace and name.
func (v *Validator) authorizeDeployments(ctx context.Context, user authenticationv1.UserInfo, old, u *v1beta1.ApplicationUpgrade) error {
	var denied []string
	for _, key := range reviewedWorkloads(old, u) {
		w, _ := v1beta1.ParseIndexKey(key)
		ns, name, resource := w.Namespace, w.Name, w.Kind.Resource()
		for _, verb := range DeploymentVerbs {
			ok, reason, err := v.Authorizer.Allowed(ctx, user, authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: verb, Group: "apps", Version: "v1", Resource: resource, Name: name})
			if err != nil {
				return fmt.Errorf("cannot check whether %s may %s %s (applicationupgrade %s/%s): %w (retry)", appupgrade.SafeText(user.Username, 253), verb, w, u.Namespace, u.Name, err)
			}
			if !ok {
				msg := fmt.Sprintf("user %q may not %s %s.apps %q in namespace %q", appupgrade.SafeText(user.Username, 253), verb, resource, name, ns)
				if reason != "" {
					msg += " (" + appupgrade.SafeText(reason, 200) + ")"
				}
				denied = append(denied, msg)
			}
		}
	}
	if len(denied) == 0 {
		return nil
	}
	return errors.New(strings.Join(denied, "; ") + ": an ApplicationUpgrade may only name workloads its author may get and patch; ask for those rights or remove the component")
}

// reviewedWorkloads is the IndexKey of every workload u references,
// sorted, unless old (nil on create) has the same spec and generation (a
// metadata or status update, which starts no generation): then none.
func reviewedWorkloads(old, u *v1beta1.ApplicationUpgrade) []string {
	if old != nil && !SpecChanged(old, u) {
		return nil
	}
	seen := map[string]bool{}
	var keys []string
	for _, c := range u.Spec.Components {
		key := c.Workload(u.Namespace).IndexKey()
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys
}

// upgradeAttributes asks for get on ApplicationUpgrade namespace/name.
func upgradeAttributes(namespace, name string) authorizationv1.ResourceAttributes {
	return authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "get", Group: v1beta1.GroupVersion.Group,
		Version: v1beta1.GroupVersion.Version, Resource: "applicationupgrades", Name: name}
}
