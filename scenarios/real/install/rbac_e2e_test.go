//go:build e2e

package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	appwebhook "github.com/lunadas/upgrade-operator/operator/appupgrade/webhook"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

const (
	releaseNamespace = "upgrade-operator-system"
	appNamespace     = "job-system"
	handoffCount     = "upgrade_operator_applicationupgrade_handoff_seconds_count"
)

// renderWatching renders the chart as release "uo" watching job-system.
func renderWatching(t *testing.T, sets ...string) []*unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	data, err := HelmTemplate(ctx, "uo", releaseNamespace, append([]string{"watchNamespaces={" + appNamespace + "}"}, sets...)...)
	return render(t, data, err)
}

// With watchNamespaces the chart grants nothing cluster-wide: one Role and
// RoleBinding in each watched namespace, and the leader election Role in
// the release namespace. The grants are minimal and stop at the namespace.
// Secure metrics (the default) add only ClusterRoles that read no data:
// create on tokenreviews and subjectaccessreviews for the manager, get on
// /metrics for a scraper (bound to nobody by the chart).
func TestHelmWatchNamespacesRendersNamespacedRBACOnly(t *testing.T) {
	objs := renderWatching(t, "webhook.certManager.enabled=true")
	assert.Empty(t, NamespacedOnly(objs))
	violations, err := Minimality(objs)
	require.NoError(t, err)
	assert.Empty(t, violations)

	var roles []string
	for _, o := range Select(objs, "Role", "RoleBinding") {
		roles = append(roles, Name(o))
	}
	assert.ElementsMatch(t, []string{
		"Role job-system/uo-upgrade-operator-manager", "RoleBinding job-system/uo-upgrade-operator-manager",
		"Role upgrade-operator-system/uo-upgrade-operator-leader-election", "RoleBinding upgrade-operator-system/uo-upgrade-operator-leader-election",
	}, roles)

	for _, g := range []struct{ ns, group, resource, verb string }{
		{appNamespace, "apps", "deployments", "patch"},
		{appNamespace, "", "pods", "watch"},
		{appNamespace, "upgrades.lunadas.dev", "applicationupgrades/status", "patch"},
		{appNamespace, "events.k8s.io", "events", "create"},
		{releaseNamespace, "coordination.k8s.io", "leases", "update"},
	} {
		ok, err := Granted(objs, g.ns, g.group, g.resource, g.verb)
		require.NoError(t, err)
		assert.True(t, ok, "%s %s/%s in %s should be granted", g.verb, g.group, g.resource, g.ns)
	}
	for _, g := range []struct{ ns, group, resource, verb string }{
		{"default", "apps", "deployments", "patch"},
		{releaseNamespace, "apps", "deployments", "patch"},
		{appNamespace, "coordination.k8s.io", "leases", "update"},
		{appNamespace, "", "secrets", "get"},
		{releaseNamespace, "", "secrets", "get"},
	} {
		ok, err := Granted(objs, g.ns, g.group, g.resource, g.verb)
		require.NoError(t, err)
		assert.False(t, ok, "%s %s/%s in %s must not be granted", g.verb, g.group, g.resource, g.ns)
	}

	// In-process certificate rotation (the default without cert-manager)
	// adds one ClusterRole: reads of the CRDs and webhook configurations,
	// updates of this release's two by name only.
	rot := renderWatching(t)
	var cluster []string
	for _, o := range Select(rot, "ClusterRole", "ClusterRoleBinding") {
		cluster = append(cluster, Name(o))
	}
	// Besides: the aggregated editor/viewer roles (for people, bound to
	// nobody by the chart), the manager's SubjectAccessReview role (issue
	// 14) and secure metrics' roles, which NamespacedOnly exempts.
	assert.ElementsMatch(t, []string{
		"ClusterRole uo-upgrade-operator-cert-rotation", "ClusterRoleBinding uo-upgrade-operator-cert-rotation",
		"ClusterRole uo-upgrade-operator-applicationupgrade-editor", "ClusterRole uo-upgrade-operator-applicationupgrade-viewer",
		"ClusterRole uo-upgrade-operator-authorization", "ClusterRoleBinding uo-upgrade-operator-authorization",
		"ClusterRole uo-upgrade-operator-metrics-auth", "ClusterRoleBinding uo-upgrade-operator-metrics-auth",
		"ClusterRole uo-upgrade-operator-metrics-reader",
	}, cluster)
	// metrics.secure=false removes exactly the metrics roles.
	plain := renderWatching(t, "metrics.secure=false")
	for _, o := range Select(plain, "ClusterRole", "ClusterRoleBinding") {
		assert.NotContains(t, o.GetName(), "-metrics-", "metrics.secure=false renders %s", Name(o))
	}
	assert.Len(t, Select(plain, "ClusterRole", "ClusterRoleBinding"), len(cluster)-3)
	for _, g := range []struct{ ns, group, resource, verb string }{
		{releaseNamespace, "", "secrets", "update"},
		{"", "apiextensions.k8s.io", "customresourcedefinitions", "watch"},
	} {
		ok, err := Granted(rot, g.ns, g.group, g.resource, g.verb)
		require.NoError(t, err)
		assert.True(t, ok, "%s %s/%s in %q should be granted", g.verb, g.group, g.resource, g.ns)
	}
	for _, r := range Select(rot, "ClusterRole") {
		if !strings.HasSuffix(Name(r), "-cert-rotation") {
			continue // the editor role is for people; the manager is bound to none of them
		}
		rules, err := rulesOf(r)
		require.NoError(t, err)
		for _, rule := range rules {
			if slices.Contains(rule.Verbs, "update") {
				assert.Len(t, rule.ResourceNames, 1, "%s updates only its own object: %v", Name(r), rule)
			}
		}
	}
	violations, err = Minimality(rot)
	require.NoError(t, err)
	assert.Empty(t, violations)

	args := managerArgs(t, objs)
	assert.Contains(t, args, "--watch-namespaces="+appNamespace)
	assert.Contains(t, args, "--leader-elect")
	assert.Contains(t, args, "--leader-election-namespace="+releaseNamespace)
}

// Every rendering the chart offers stays minimal; without watchNamespaces
// it is a ClusterRole, and the platform API adds a ClusterRole of its own.
func TestHelmRenderingsAreMinimal(t *testing.T) {
	for _, sets := range [][]string{
		nil,
		{"platform.enabled=true", "vim.credentialsSecret=keystone"},
		{"webhook.certManager.enabled=true", "platform.enabled=true", "vim.credentialsSecret=keystone", "manager.replicas=3"},
		{"metrics.secure=false", "metrics.port=8080"},
		{"watchNamespaces={a,b}", "manager.leaderElection.enabled=false", "manager.replicas=1", "webhook.enabled=false"},
	} {
		t.Run(strings.Join(sets, ","), func(t *testing.T) {
			data, err := HelmTemplate(context.Background(), "uo", releaseNamespace, sets...)
			objs := render(t, data, err)
			// Secure metrics' -metrics-reader ClusterRole (get /metrics
			// only, bound to nothing: the user binds it to the scraper) is
			// the one non-resource rule Minimality accepts.
			violations, err := Minimality(objs)
			require.NoError(t, err)
			assert.Empty(t, violations)
			for _, s := range Select(objs, "Secret") {
				assert.Equal(t, "uo-upgrade-operator-webhook-tls", s.GetName(), "the chart creates no Secret but the webhook's")
			}
		})
	}
}

// Sufficiency: the manager binary runs on the local control plane as its
// ServiceAccount, with exactly the chart's rendered RBAC and the rendered
// Deployment's arguments, and the demo upgrade completes in order. Its log
// must show no "forbidden", and its metrics endpoint, scraped while it
// runs, one handoff observation per completed upgrade. The metrics are the
// chart's default, HTTPS with each scrape's token reviewed by the API
// server as the manager's ServiceAccount: refused without a token (401)
// and to a ServiceAccount not bound to -metrics-reader (403), served to one
// bound to it.
func TestRBACServiceAccountCompletesDemo(t *testing.T) {
	// cert-manager's rendering: the test gives the manager its certificate
	// (no kubelet mounts a rotated Secret here).
	objs := renderWatching(t, "webhook.certManager.enabled=true")
	require.Empty(t, NamespacedOnly(objs))
	bin := buildManager(t)
	cp, c := startControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	createNamespaces(t, c, releaseNamespace, appNamespace)
	rbac := Select(objs, "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
	require.NoError(t, CreateAll(ctx, c, rbac), "apply the rendered RBAC")
	sas := Select(objs, "ServiceAccount")
	require.Len(t, sas, 1)
	saCfg, err := ServiceAccountConfig(ctx, cp.RESTConfig, sas[0].GetNamespace(), sas[0].GetName(), time.Hour)
	require.NoError(t, err)
	kubeconfig := filepath.Join(t.TempDir(), "sa.kubeconfig")
	require.NoError(t, WriteKubeconfig(saCfg, kubeconfig))
	scraper, stranger := metricsScrapers(t, ctx, cp.RESTConfig, c, releaseNamespace, "uo-upgrade-operator-metrics-reader")

	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	// The manager serves its webhooks (conversion, admission) as in the
	// cluster, on a free local port with a certificate of the test's; the
	// CRD's conversion points at the harness (realcluster.InstallCRDs).
	certDir := t.TempDir()
	cert, err := appwebhook.SelfSigned([]string{"127.0.0.1"}, time.Hour)
	require.NoError(t, err)
	require.NoError(t, cert.WriteFiles(certDir))
	chartArgs := managerArgs(t, objs)
	require.Contains(t, chartArgs, "--metrics-secure", "the chart's default")
	require.Contains(t, chartArgs, "--metrics-bind-address=:8443", "the chart's default")
	// The last --metrics-bind-address wins: a free loopback port here.
	args := append(chartArgs, "--kubeconfig="+kubeconfig,
		"--metrics-bind-address="+metricsAddr, "--health-probe-bind-address=0",
		"--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", freePort(t)), "--webhook-cert-dir="+certDir)
	t.Logf("manager as system:serviceaccount:%s:%s: %v", sas[0].GetNamespace(), sas[0].GetName(), args)
	var mgr *process
	start := func(context.Context) (<-chan error, error) {
		mgr = startProcess(t, "manager", bin, args, []string{"KUBECONFIG="})
		return mgr.done, nil
	}
	sum, err := realcluster.RunDemo(ctx, realcluster.DemoConfig{
		RESTConfig: cp.RESTConfig, Timeout: 4 * time.Minute, WatchNamespaces: []string{appNamespace},
		Out: testWriter{t}, StartManager: start,
	})
	require.NoError(t, err)
	completed := 0
	for _, u := range sum.Upgrades {
		if u.Status.Phase == upgradesv1alpha1.PhaseCompleted {
			completed++
		}
	}
	require.Equal(t, 1, completed)

	// The manager is still running: scrape it as Prometheus would, with
	// the token of a ServiceAccount bound to -metrics-reader.
	m := assertSecureMetrics(t, "https://"+metricsAddr+"/metrics", scraper, stranger)
	assert.Equal(t, float64(completed), m[handoffCount], "one handoff observation per completed upgrade")
	assert.Equal(t, float64(completed), m[`upgrade_operator_applicationupgrades{phase="Completed"}`])
	assert.Equal(t, 2.0, m[`upgrade_operator_applicationupgrade_image_writes_total{kind="Deployment"}`], "the worker's and the API's")
	t.Logf("handoff: count %v, sum %.3fs", m[handoffCount], m["upgrade_operator_applicationupgrade_handoff_seconds_sum"])

	var reasons []string
	for _, e := range sum.KubeEvents {
		reasons = append(reasons, e.Reason)
	}
	assert.Subset(t, reasons, []string{"WorkerPatched", "WorkerRolledOut", "APIPatched", "Completed"},
		"the ServiceAccount may record events")

	log, err := os.ReadFile(mgr.log)
	require.NoError(t, err)
	assert.NotContains(t, strings.ToLower(string(log)), "forbidden", "the rendered RBAC must cover every request")
	assert.Contains(t, strings.ToLower(string(log)), "successfully acquired lease", "leader election in the release namespace")
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// values.schema.json refuses a misspelt value (Helm would otherwise ignore
// it silently: a typo in watchNamespaces would grant cluster-wide RBAC),
// and the templates refuse two reconciling replicas.
func TestHelmRefusesBadValues(t *testing.T) {
	for set, want := range map[string]string{
		"watchNamespace={job-system}":                                "additional properties 'watchNamespace' not allowed",
		"watchNamespaces={Job_System}":                               "does not match pattern",
		"manager.replicas=2,manager.leaderElection.enabled=false":    "needs manager.leaderElection.enabled=true",
		"webhook.failurePolicy=Sometimes":                            "webhook/failurePolicy",
		"vim.keystoneURL=http://k:5000/v3":                           "additional properties 'keystoneURL' not allowed",
		"platform.enabled=true":                                      "platform.enabled needs vim.credentialsSecret",
		"vim.credentialsSecret=keystone":                             "read only by the platform controller",
		"webhook.certManager.enabled=maybe":                          "webhook/certManager/enabled",
		"webhook.url=https://127.0.0.1:9443":                         "the host must be a DNS name",
		"webhook.url=https://localhost:9443/hooks":                   "webhook/url",
		"webhook.url=http://localhost:9443":                          "webhook/url",
		"manager.env[0].name=WATCH_NAMESPACE,manager.env[0].value=x": "manager.env lists WATCH_NAMESPACE, which nothing in the manager reads",
	} {
		_, err := HelmTemplate(context.Background(), "uo", releaseNamespace, set)
		require.Error(t, err, set)
		assert.Contains(t, err.Error(), want, set)
	}
}
