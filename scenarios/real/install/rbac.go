package install

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// readVerbs read a resource's contents.
var readVerbs = []string{"get", "list", "watch"}

// Minimality returns one line per least-privilege violation in the Roles
// and ClusterRoles among objs:
//   - a wildcard ("*") verb, resource or API group;
//   - any Secret read (get, list, watch) in a ClusterRole: a cluster-wide
//     Secret read (the operator mounts its Secrets, it never reads them
//     through the API);
//   - delete or deletecollection on Deployments (the operator patches
//     images; it never removes a workload);
//   - escalate, bind or impersonate, which hand out more than they name;
//   - any non-resource URL rule but get on /metrics alone (the
//     metrics-reader ClusterRole a scraper is bound to for --metrics-secure).
//
// Non-RBAC objects are ignored. An empty result means minimal.
func Minimality(objs []*unstructured.Unstructured) ([]string, error) {
	var out []string
	for _, o := range Select(objs, "Role", "ClusterRole") {
		rules, err := rulesOf(o)
		if err != nil {
			return nil, err
		}
		cluster := o.GetKind() == "ClusterRole"
		for i, r := range rules {
			where := fmt.Sprintf("%s rule %d %v/%v %v", Name(o), i, r.APIGroups, r.Resources, r.Verbs)
			if slices.Contains(r.Verbs, "*") {
				out = append(out, where+": wildcard verb")
			}
			if slices.Contains(r.Resources, "*") {
				out = append(out, where+": wildcard resource")
			}
			if slices.Contains(r.APIGroups, "*") {
				out = append(out, where+": wildcard API group")
			}
			if len(r.NonResourceURLs) > 0 && !metricsGet(r) {
				out = append(out, where+": non-resource URLs")
			}
			if cluster && inGroup(r, "") && slices.Contains(r.Resources, "secrets") && anyOf(r.Verbs, readVerbs...) {
				out = append(out, where+": cluster-wide Secret read")
			}
			if inGroup(r, "apps") && slices.Contains(r.Resources, "deployments") && anyOf(r.Verbs, "delete", "deletecollection") {
				out = append(out, where+": delete on Deployments")
			}
			if anyOf(r.Verbs, "escalate", "bind") || (slices.Contains(r.Verbs, "impersonate") && !serviceAccountsOnly(r)) {
				out = append(out, where+": escalate, bind or impersonate")
			}
		}
	}
	return out, nil
}

// serviceAccountsOnly reports whether r names only core/v1
// serviceaccounts: impersonating a ServiceAccount (spec.serviceAccountName,
// the Flux way) is allowed, impersonating users or groups is not.
func serviceAccountsOnly(r rbacv1.PolicyRule) bool {
	return slices.Equal(r.APIGroups, []string{""}) && slices.Equal(r.Resources, []string{"serviceaccounts"})
}

// metricsGet reports whether r is exactly get on the non-resource URL
// /metrics: reading the manager's metrics, and nothing of the API.
func metricsGet(r rbacv1.PolicyRule) bool {
	return slices.Equal(r.NonResourceURLs, []string{"/metrics"}) && slices.Equal(r.Verbs, []string{"get"}) &&
		len(r.APIGroups) == 0 && len(r.Resources) == 0 && len(r.ResourceNames) == 0
}

// NamespacedOnly returns one line per ClusterRole or ClusterRoleBinding in
// objs that grants data cluster-wide: with watchNamespaces set, the chart
// must grant nothing cluster-wide. Exempt: aggregated ClusterRoles
// (rbac.authorization.k8s.io/aggregate-to-* labels: bound to nobody, they
// extend admin/edit/view), a ClusterRole whose only rules are create on
// subjectaccessreviews or tokenreviews (asking the authorizer or the
// authenticator reads nothing: the webhook's rights checks and
// --metrics-secure), and one whose only rule is get on /metrics (the
// metrics-reader role for scrapers), with their bindings.
func NamespacedOnly(objs []*unstructured.Unstructured) []string {
	harmless := map[string]bool{}
	for _, o := range Select(objs, "ClusterRole") {
		if aggregated(o) || reviewsOnly(o) || metricsReaderOnly(o) {
			harmless[o.GetName()] = true
		}
	}
	var out []string
	for _, o := range Select(objs, "ClusterRole", "ClusterRoleBinding") {
		if o.GetKind() == "ClusterRole" && harmless[o.GetName()] {
			continue
		}
		if name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name"); o.GetKind() == "ClusterRoleBinding" && harmless[name] {
			continue
		}
		out = append(out, Name(o)+": cluster-wide grant")
	}
	return out
}

func aggregated(o *unstructured.Unstructured) bool {
	for k := range o.GetLabels() {
		if strings.HasPrefix(k, "rbac.authorization.k8s.io/aggregate-to-") {
			return true
		}
	}
	return false
}

func reviewsOnly(o *unstructured.Unstructured) bool {
	rules, err := rulesOf(o)
	if err != nil || len(rules) == 0 {
		return false
	}
	for _, r := range rules {
		sar := slices.Equal(r.APIGroups, []string{"authorization.k8s.io"}) && slices.Equal(r.Resources, []string{"subjectaccessreviews"})
		tr := slices.Equal(r.APIGroups, []string{"authentication.k8s.io"}) && slices.Equal(r.Resources, []string{"tokenreviews"})
		if !(sar || tr) || !slices.Equal(r.Verbs, []string{"create"}) || len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			return false
		}
	}
	return true
}

func metricsReaderOnly(o *unstructured.Unstructured) bool {
	rules, err := rulesOf(o)
	if err != nil || len(rules) == 0 {
		return false
	}
	for _, r := range rules {
		if !metricsGet(r) {
			return false
		}
	}
	return true
}

// Granted reports whether a Role or ClusterRole in objs that applies in
// namespace ("" for cluster-scoped grants only) allows verb on
// group/resource. A ClusterRole counts everywhere (as if bound cluster-wide).
func Granted(objs []*unstructured.Unstructured, namespace, group, resource, verb string) (bool, error) {
	for _, o := range Select(objs, "Role", "ClusterRole") {
		if o.GetKind() == "Role" && o.GetNamespace() != namespace {
			continue
		}
		rules, err := rulesOf(o)
		if err != nil {
			return false, err
		}
		for _, r := range rules {
			if inGroup(r, group) && (slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) &&
				(slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*")) {
				return true, nil
			}
		}
	}
	return false, nil
}

func rulesOf(o *unstructured.Unstructured) ([]rbacv1.PolicyRule, error) {
	var role rbacv1.ClusterRole // Role and ClusterRole share the rules field
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
		return nil, fmt.Errorf("decode %s: %w", Name(o), err)
	}
	return role.Rules, nil
}

func inGroup(r rbacv1.PolicyRule, group string) bool {
	return slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")
}

func anyOf(have []string, want ...string) bool {
	for _, w := range want {
		if slices.Contains(have, w) {
			return true
		}
	}
	return false
}
