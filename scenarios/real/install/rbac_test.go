package install

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The committed RBAC: the generated ClusterRole (deploy/ and the chart's
// copy), the hand-written leader-election Role and the metrics roles.
var committedRBAC = []string{
	"deploy/rbac/role.yaml",
	"deploy/rbac/role_binding.yaml",
	"deploy/rbac/leader_election_role.yaml",
	ChartDir + "/files/rbac/role.yaml",
	"deploy/rbac/applicationupgrade_editor_role.yaml",
	"deploy/rbac/applicationupgrade_viewer_role.yaml",
	"deploy/rbac/metrics_auth_role.yaml",
	"deploy/rbac/metrics_auth_role_binding.yaml",
	"deploy/rbac/metrics_reader_role.yaml",
}

func TestCommittedRBACIsMinimal(t *testing.T) {
	objs, err := ParseFiles(committedRBAC...)
	require.NoError(t, err)
	require.NotEmpty(t, Select(objs, "ClusterRole"), "the generated role is missing: run make manifests")
	got, err := Minimality(objs)
	require.NoError(t, err)
	assert.Empty(t, got)
}

// Each planted rule must be reported: the check can fail.
func TestMinimalityCatchesPlantedRules(t *testing.T) {
	cases := []struct {
		name, kind string
		rule       map[string]any
		want       string
	}{
		{"wildcard verb", "Role", rule("", "pods", "*"), "wildcard verb"},
		{"wildcard resource", "Role", rule("apps", "*", "get"), "wildcard resource"},
		{"wildcard group", "Role", rule("*", "deployments", "get"), "wildcard API group"},
		{"cluster-wide secret get", "ClusterRole", rule("", "secrets", "get"), "cluster-wide Secret read"},
		{"cluster-wide secret list", "ClusterRole", rule("", "secrets", "list", "watch"), "cluster-wide Secret read"},
		{"delete deployments", "Role", rule("apps", "deployments", "get", "delete"), "delete on Deployments"},
		{"deletecollection deployments", "ClusterRole", rule("apps", "deployments", "deletecollection"), "delete on Deployments"},
		{"escalate", "ClusterRole", rule("rbac.authorization.k8s.io", "roles", "escalate"), "escalate, bind or impersonate"},
		{"impersonate users", "ClusterRole", rule("", "users", "impersonate"), "escalate, bind or impersonate"},
		{"impersonate groups", "Role", rule("", "groups", "impersonate"), "escalate, bind or impersonate"},
		{"non-resource URL other than /metrics", "ClusterRole", urlRule([]string{"/healthz"}, "get"), "non-resource URLs"},
		{"non-resource wildcard", "ClusterRole", urlRule([]string{"*"}, "get"), "non-resource URLs"},
		{"post /metrics", "ClusterRole", urlRule([]string{"/metrics"}, "get", "post"), "non-resource URLs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := ParseFiles(committedRBAC...)
			require.NoError(t, err)
			objs = append(objs, role(tc.kind, tc.rule))
			got, err := Minimality(objs)
			require.NoError(t, err)
			require.Len(t, got, 1, "violations: %v", got)
			assert.Contains(t, got[0], tc.want)
			assert.Contains(t, got[0], "planted")
		})
	}
}

// A namespaced Role may read Secrets of its own namespace: only a
// cluster-wide read is a violation.
func TestMinimalityAllowsNamespacedSecretRead(t *testing.T) {
	got, err := Minimality([]*unstructured.Unstructured{role("Role", rule("", "secrets", "get"))})
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestNamespacedOnly(t *testing.T) {
	objs, err := ParseFiles(append(committedRBAC[:3:3], committedRBAC[4:]...)...)
	require.NoError(t, err)
	got := NamespacedOnly(objs)
	require.Len(t, got, 2, "the kustomize RBAC is cluster-wide: a ClusterRole and its binding")
	assert.True(t, strings.HasPrefix(got[0], "ClusterRole upgrade-operator-manager"), got[0])
	assert.Empty(t, NamespacedOnly(Select(objs, "Role", "RoleBinding")))
	sar := role("ClusterRole", rule("authorization.k8s.io", "subjectaccessreviews", "create"))
	assert.Empty(t, NamespacedOnly([]*unstructured.Unstructured{sar}), "creating SubjectAccessReviews reads no data")
	assert.Len(t, NamespacedOnly([]*unstructured.Unstructured{role("ClusterRole", rule("authorization.k8s.io", "subjectaccessreviews", "create", "get"))}), 1)

	// --metrics-secure's roles: the manager's reviews and the scraper's
	// /metrics get grant no data; anything more is reported.
	metrics, err := ParseFiles("deploy/rbac/metrics_auth_role.yaml", "deploy/rbac/metrics_auth_role_binding.yaml", "deploy/rbac/metrics_reader_role.yaml")
	require.NoError(t, err)
	require.Len(t, metrics, 3)
	assert.Empty(t, NamespacedOnly(metrics))
	assert.Len(t, NamespacedOnly([]*unstructured.Unstructured{role("ClusterRole", rule("authentication.k8s.io", "tokenreviews", "create", "list"))}), 1)
	assert.Len(t, NamespacedOnly([]*unstructured.Unstructured{role("ClusterRole", urlRule([]string{"/metrics", "/debug/pprof"}, "get"))}), 1)
}

// The metrics-reader rule (get /metrics) is the one non-resource rule
// Minimality accepts.
func TestMinimalityAllowsMetricsReader(t *testing.T) {
	got, err := Minimality([]*unstructured.Unstructured{role("ClusterRole", urlRule([]string{"/metrics"}, "get"))})
	require.NoError(t, err)
	assert.Empty(t, got)
}

func urlRule(urls []string, verbs ...string) map[string]any {
	us := make([]any, len(urls))
	for i, u := range urls {
		us[i] = u
	}
	vs := make([]any, len(verbs))
	for i, v := range verbs {
		vs[i] = v
	}
	return map[string]any{"nonResourceURLs": us, "verbs": vs}
}

func TestGranted(t *testing.T) {
	objs, err := ParseFiles("deploy/rbac/leader_election_role.yaml")
	require.NoError(t, err)
	ok, err := Granted(objs, "upgrade-operator-system", "", "events", "create")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = Granted(objs, "job-system", "", "events", "create")
	require.NoError(t, err)
	assert.False(t, ok, "a Role grants nothing outside its namespace")
}

func rule(group, resource string, verbs ...string) map[string]any {
	vs := make([]any, len(verbs))
	for i, v := range verbs {
		vs[i] = v
	}
	return map[string]any{"apiGroups": []any{group}, "resources": []any{resource}, "verbs": vs}
}

func role(kind string, r map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": "planted"}
	if kind == "Role" {
		md["namespace"] = "job-system"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": md, "rules": []any{r},
	}}
}
