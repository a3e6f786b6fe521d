package webhook

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// rbac is a fake Authorizer: grants are "user verb resource namespace/name"
// (name "*" for any); it records every question.
type rbac struct {
	grants map[string]bool
	asked  []string
	users  []authenticationv1.UserInfo
}

func (r *rbac) Allowed(_ context.Context, u authenticationv1.UserInfo, a authorizationv1.ResourceAttributes) (bool, string, error) {
	q := fmt.Sprintf("%s %s %s %s/%s", u.Username, a.Verb, a.Resource, a.Namespace, a.Name)
	r.asked = append(r.asked, q)
	r.users = append(r.users, u)
	any := fmt.Sprintf("%s %s %s %s/*", u.Username, a.Verb, a.Resource, a.Namespace)
	return r.grants[q] || r.grants[any], "", nil
}

func asUser(name string) context.Context {
	return admission.NewContextWithRequest(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UserInfo: authenticationv1.UserInfo{Username: name, UID: "uid-" + name, Groups: []string{"system:serviceaccounts", "tenants"},
			Extra: map[string]authenticationv1.ExtraValue{"scopes": {"a"}}}}})
}

func validator(t *testing.T, authz *rbac, allowCross bool, objs ...v1beta1.ApplicationUpgrade) *Validator {
	s := runtime.NewScheme()
	require.NoError(t, v1beta1.AddToScheme(s))
	b := fake.NewClientBuilder().WithScheme(s)
	for i := range objs {
		b = b.WithObjects(&objs[i])
	}
	return &Validator{Reader: b.Build(), Authorizer: authz, AllowCrossNamespaceRefs: allowCross}
}

// With cross-namespace references allowed, the author must still hold get
// and patch on every Deployment; the refusal names verb, resource,
// namespace and name, and the review carries the user's uid, groups and extra.
func TestValidatorSubjectAccessReview(t *testing.T) {
	authz := &rbac{grants: map[string]bool{
		"tenant get deployments tenant-a/*":      true,
		"tenant patch deployments tenant-a/*":    true,
		"tenant get deployments victim/payments": true,
	}}
	v := validator(t, authz, true)
	u := upgrade("tenant-a", "up", comp("own", "app"), comp("pay", "victim/payments"))
	_, err := v.ValidateCreate(asUser("tenant"), u)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `user "tenant" may not patch deployments.apps "payments" in namespace "victim"`)
	assert.NotContains(t, err.Error(), "may not get")
	assert.ElementsMatch(t, []string{
		"tenant get deployments tenant-a/app", "tenant patch deployments tenant-a/app",
		"tenant get deployments victim/payments", "tenant patch deployments victim/payments"}, authz.asked)
	assert.Equal(t, "uid-tenant", authz.users[0].UID)
	assert.Equal(t, []string{"system:serviceaccounts", "tenants"}, authz.users[0].Groups)
	assert.Equal(t, authenticationv1.ExtraValue{"a"}, authz.users[0].Extra["scopes"])

	authz.grants["tenant patch deployments victim/payments"] = true
	_, err = v.ValidateCreate(asUser("tenant"), u)
	assert.NoError(t, err, "with the rights the upgrade is admitted")
}

// Same-namespace Deployments are checked too: creating upgrades in a
// namespace is not the right to patch its Deployments.
func TestValidatorSameNamespaceNeedsRights(t *testing.T) {
	v := validator(t, &rbac{grants: map[string]bool{}}, false)
	_, err := v.ValidateCreate(asUser("viewer"), upgrade("tenant-a", "up", comp("own", "app")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `user "viewer" may not get deployments.apps "app" in namespace "tenant-a"`)
	assert.Contains(t, err.Error(), `may not patch deployments.apps "app"`)
	assert.False(t, apierrors.IsInvalid(err), "missing rights are denied (403), not Invalid")

	_, err = v.ValidateCreate(asUser("viewer"), upgrade("tenant-a", "up", comp("a", "d1", "a")))
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err), "a graph error is 422 Invalid: %v", err)
}

// Any spec change is a new generation that writes every component's
// image again, so the requester must hold get and patch on every workload
// the new spec names; a metadata-only update asks nothing.
func TestValidatorUpdateReviewsEveryWorkloadOfAChangedSpec(t *testing.T) {
	authz := &rbac{grants: map[string]bool{"t get deployments ns/a": true, "t patch deployments ns/a": true}}
	v := validator(t, authz, false)
	old := upgrade("ns", "up", comp("a", "a"), comp("b", "b"))
	changed := old.DeepCopy()
	changed.Spec.Components[0].Image = "registry.example.com/a:v3"
	_, err := v.ValidateUpdate(asUser("t"), old, changed)
	require.Error(t, err, "changing a's image restarts the upgrade, which writes b's image again")
	assert.Contains(t, err.Error(), `user "t" may not get deployments.apps "b" in namespace "ns"`)
	assert.NotContains(t, err.Error(), `"a"`)
	assert.ElementsMatch(t, []string{"t get deployments ns/a", "t patch deployments ns/a", "t get deployments ns/b", "t patch deployments ns/b"}, authz.asked)

	authz.grants["t get deployments ns/b"], authz.grants["t patch deployments ns/b"] = true, true
	_, err = v.ValidateUpdate(asUser("t"), old, changed)
	require.NoError(t, err, "with rights on every workload the change is admitted")

	authz.asked = nil
	relabelled := old.DeepCopy()
	relabelled.Labels = map[string]string{"x": "y"}
	_, err = v.ValidateUpdate(asUser("t"), old, relabelled)
	require.NoError(t, err)
	assert.Empty(t, authz.asked, "a metadata-only update starts no generation and asks nothing")
}

// The attacks a tenant trial found (2026-12-02): a requester with no right
// on any workload removes a component, or points the upgrade at another
// ServiceAccount, keeping every remaining (workload, container, image).
// Either starts a new generation that writes the remaining images again
// (rolling back a Deployment an admin had rolled forward), so both are
// refused, naming the workloads.
func TestValidatorUpdateWithoutRightsCannotRestartTheUpgrade(t *testing.T) {
	v := validator(t, &rbac{grants: map[string]bool{}}, false)
	old := upgrade("ns", "two", comp("w", "web-worker"), comp("a", "web-api"))

	removed := old.DeepCopy()
	removed.Spec.Components = removed.Spec.Components[:1]
	_, err := v.ValidateUpdate(asUser("bob"), old, removed)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `user "bob" may not patch deployments.apps "web-worker" in namespace "ns"`)

	emptied := old.DeepCopy()
	emptied.Generation++
	emptied.Spec.Components[0].DependsOn = []string{}
	_, err = v.ValidateUpdate(asUser("bob"), old, emptied)
	require.Error(t, err, "an empty dependsOn added is a new generation that writes every image again")
	assert.Contains(t, err.Error(), `may not patch deployments.apps "web-worker" in namespace "ns"`)

	rebound := old.DeepCopy()
	rebound.Spec.ServiceAccountName = "default"
	_, err = v.ValidateUpdate(asUser("bob"), old, rebound)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `may not patch deployments.apps "web-api" in namespace "ns"`)
}

// The rights are checked before the overlap guard, so a requester without
// rights learns nothing about other upgrades; with rights, another
// namespace's upgrade is named only when the requester may get it.
func TestValidatorOverlapDisclosure(t *testing.T) {
	holder := withPhase(upgrade("victim", "secret-plan", comp("p", "payments")), v1beta1.PhaseProgressing, 1)
	authz := &rbac{grants: map[string]bool{}}
	v := validator(t, authz, true, holder)
	u := upgrade("tenant-a", "up", comp("pay", "victim/payments"))
	_, err := v.ValidateCreate(asUser("tenant"), u)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "secret-plan")
	assert.NotContains(t, err.Error(), "already being upgraded")

	authz.grants["tenant get deployments victim/payments"] = true
	authz.grants["tenant patch deployments victim/payments"] = true
	_, err = v.ValidateCreate(asUser("tenant"), u)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already being upgraded by another applicationupgrade")
	assert.NotContains(t, err.Error(), "secret-plan")

	authz.grants["tenant get applicationupgrades victim/secret-plan"] = true
	_, err = v.ValidateCreate(asUser("tenant"), u)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "applicationupgrade victim/secret-plan")
}

// Without an admission request the validator cannot know who asks and refuses.
func TestValidatorWithoutRequestRefuses(t *testing.T) {
	v := validator(t, &rbac{}, false)
	_, err := v.ValidateCreate(context.Background(), upgrade("ns", "up", comp("a", "a")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no admission request")
}

type (
	contextT = context.Context
	userT    = authenticationv1.UserInfo
	attrsT   = authorizationv1.ResourceAttributes
)

// A component naming no container of a workload with several, or a name
// the pod template lacks, is refused at admission with the container
// names (a trial saw it admitted, then Failed at run time); only after the
// requester was found allowed to get the workload. A workload the cache
// does not hold passes (checked again when the upgrade runs).
func TestValidatorResolvesTheContainer(t *testing.T) {
	s := runtime.NewScheme()
	require.NoError(t, v1beta1.AddToScheme(s))
	require.NoError(t, appsv1.AddToScheme(s))
	side := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "side-worker"}}
	side.Spec.Template.Spec.Containers = []corev1.Container{{Name: "proxy", Image: "envoy:1.30.0"}, {Name: "worker", Image: "w:1"}}
	authz := &rbac{grants: map[string]bool{"t get deployments ns/*": true, "t patch deployments ns/*": true}}
	v := &Validator{Reader: fake.NewClientBuilder().WithScheme(s).WithObjects(side).Build(), Authorizer: authz}

	_, err := v.ValidateCreate(asUser("t"), upgrade("ns", "up", comp("w", "side-worker")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "deployment ns/side-worker has 2 containers (proxy, worker): set spec.components[0].containerName to one of them")
	assert.True(t, apierrors.IsInvalid(err), "the object is wrong in itself: 422 Invalid, not 403")

	named := upgrade("ns", "up", comp("w", "side-worker"))
	named.Spec.Components[0].ContainerName = "wroker"
	_, err = v.ValidateCreate(asUser("t"), named)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `has no container "wroker" (containers: proxy, worker)`)

	named.Spec.Components[0].ContainerName = "worker"
	_, err = v.ValidateCreate(asUser("t"), named)
	assert.NoError(t, err)

	_, err = v.ValidateCreate(asUser("t"), upgrade("ns", "up", comp("w", "not-cached")))
	assert.NoError(t, err, "a workload the cache does not hold is checked at run time")

	_, err = v.ValidateCreate(asUser("nobody"), upgrade("ns", "up", comp("w", "side-worker")))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "proxy", "no container names for a requester who may not get the workload")
}
