//go:build e2e

package install

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// metricsWiring is what a rendering says about the metrics endpoint.
type metricsWiring struct {
	args          []string
	containerPort int32
	service       corev1.ServicePort
	// reviewsBoundToManager: a ClusterRole granting create on tokenreviews
	// and subjectaccessreviews is bound to the Deployment's ServiceAccount.
	reviewsBoundToManager bool
	// reader: the name of a ClusterRole whose only rule is get on /metrics.
	reader string
}

func readMetricsWiring(t *testing.T, objs []*unstructured.Unstructured) metricsWiring {
	t.Helper()
	var w metricsWiring
	deps := Select(objs, "Deployment")
	require.Len(t, deps, 1)
	var d appsv1.Deployment
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(deps[0].Object, &d))
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "manager" {
			continue
		}
		w.args = c.Args
		for _, p := range c.Ports {
			if p.Name == "metrics" {
				w.containerPort = p.ContainerPort
			}
		}
	}
	for _, o := range Select(objs, "Service") {
		var s corev1.Service
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &s))
		for _, p := range s.Spec.Ports {
			if p.TargetPort.StrVal == "metrics" {
				w.service = p
			}
		}
	}
	reviews := map[string]bool{}
	for _, o := range Select(objs, "ClusterRole") {
		rules, err := rulesOf(o)
		require.NoError(t, err)
		if metricsReaderOnly(o) {
			w.reader = o.GetName()
		}
		tr := slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, "authentication.k8s.io") && slices.Contains(r.Resources, "tokenreviews") && slices.Contains(r.Verbs, "create")
		})
		sar := slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, "authorization.k8s.io") && slices.Contains(r.Resources, "subjectaccessreviews") && slices.Contains(r.Verbs, "create")
		})
		reviews[o.GetName()] = tr && sar
	}
	for _, o := range Select(objs, "ClusterRoleBinding") {
		var b rbacv1.ClusterRoleBinding
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b))
		if !reviews[b.RoleRef.Name] {
			continue
		}
		for _, s := range b.Subjects {
			if s.Kind == "ServiceAccount" && s.Name == d.Spec.Template.Spec.ServiceAccountName && s.Namespace == d.Namespace {
				w.reviewsBoundToManager = true
			}
		}
	}
	return w
}

// Secure metrics by default, as kubebuilder's scaffold: the chart and the
// kustomize installs serve HTTPS on :8443 (--metrics-secure), the metrics
// Service says https on 8443, the manager's ServiceAccount may create
// TokenReviews and SubjectAccessReviews, and a metrics-reader ClusterRole
// (get /metrics) is there to bind a scraper to. metrics.secure=false is the
// opt-out: plain HTTP and none of those roles.
func TestChartMetricsSecureByDefault(t *testing.T) {
	ctx := context.Background()
	secure := map[string]func() ([]byte, error){
		"helm defaults":                      func() ([]byte, error) { return HelmTemplate(ctx, "uo", releaseNamespace) },
		"helm watchNamespaces":               func() ([]byte, error) { return HelmTemplate(ctx, "uo", releaseNamespace, "watchNamespaces={a}") },
		"kustomize deploy/default":           func() ([]byte, error) { return Kustomize(ctx, "deploy/default") },
		"kustomize deploy/overlays/platform": func() ([]byte, error) { return Kustomize(ctx, "deploy/overlays/platform") },
	}
	for name, r := range secure {
		t.Run(name, func(t *testing.T) {
			data, err := r()
			w := readMetricsWiring(t, render(t, data, err))
			assert.Contains(t, w.args, "--metrics-secure")
			assert.Contains(t, w.args, "--metrics-bind-address=:8443")
			assert.EqualValues(t, 8443, w.containerPort)
			assert.EqualValues(t, 8443, w.service.Port)
			require.NotNil(t, w.service.AppProtocol)
			assert.Equal(t, "https", *w.service.AppProtocol)
			assert.True(t, w.reviewsBoundToManager, "the manager's ServiceAccount may create TokenReviews and SubjectAccessReviews")
			assert.NotEmpty(t, w.reader, "a ClusterRole with get on /metrics only")
		})
	}

	data, err := HelmTemplate(ctx, "uo", releaseNamespace, "metrics.secure=false", "metrics.port=8080")
	w := readMetricsWiring(t, render(t, data, err))
	assert.NotContains(t, w.args, "--metrics-secure")
	assert.Contains(t, w.args, "--metrics-bind-address=:8080")
	assert.EqualValues(t, 8080, w.service.Port)
	require.NotNil(t, w.service.AppProtocol)
	assert.Equal(t, "http", *w.service.AppProtocol)
	assert.False(t, w.reviewsBoundToManager)
	assert.Empty(t, w.reader)
}

// The ServiceMonitor scrapes what the manager serves: HTTPS with a bearer
// token and the self-signed certificate unverified by default (Prometheus'
// own token from its file, or a Secret's key as authorization
// credentials), plain HTTP with metrics.secure=false. Field names are
// prometheus-operator's Endpoint (pkg/apis/monitoring/v1/types.go);
// `make test-dryrun` has the API server check them against its CRD.
func TestChartServiceMonitor(t *testing.T) {
	endpoint := func(t *testing.T, sets ...string) map[string]any {
		t.Helper()
		data, err := HelmTemplate(context.Background(), "uo", releaseNamespace, append([]string{"metrics.serviceMonitor.enabled=true"}, sets...)...)
		sms := Select(render(t, data, err), "ServiceMonitor")
		require.Len(t, sms, 1)
		eps, _, _ := unstructured.NestedSlice(sms[0].Object, "spec", "endpoints")
		require.Len(t, eps, 1)
		return eps[0].(map[string]any)
	}

	ep := endpoint(t)
	assert.Equal(t, "metrics", ep["port"])
	assert.Equal(t, "https", ep["scheme"])
	assert.Equal(t, "/var/run/secrets/kubernetes.io/serviceaccount/token", ep["bearerTokenFile"])
	assert.NotContains(t, ep, "authorization")
	skip, _, _ := unstructured.NestedBool(ep, "tlsConfig", "insecureSkipVerify")
	assert.True(t, skip)

	ep = endpoint(t, "metrics.serviceMonitor.tokenSecret.name=prometheus-uo-token")
	assert.NotContains(t, ep, "bearerTokenFile", "authorization and bearerTokenFile are alternatives")
	typ, _, _ := unstructured.NestedString(ep, "authorization", "type")
	name, _, _ := unstructured.NestedString(ep, "authorization", "credentials", "name")
	key, _, _ := unstructured.NestedString(ep, "authorization", "credentials", "key")
	assert.Equal(t, []string{"Bearer", "prometheus-uo-token", "token"}, []string{typ, name, key})
	assert.Equal(t, "https", ep["scheme"])

	ep = endpoint(t, "metrics.secure=false", "metrics.port=8080")
	assert.Equal(t, "http", ep["scheme"])
	for _, f := range []string{"bearerTokenFile", "authorization", "tlsConfig"} {
		assert.NotContains(t, ep, f)
	}

	_, err := HelmTemplate(context.Background(), "uo", releaseNamespace, "metrics.serviceMonitor.tokenSecret.name=Bad_Name")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tokenSecret")
}

// `kubectl apply --dry-run=server` of the chart's monitoring objects with
// prometheus-operator's CRDs installed (`make prometheus-crds`: generated
// from its API module, as its own Makefile does): the API server checks the
// ServiceMonitor (each way it scrapes: Prometheus' token file, a token
// Secret, plain HTTP) and the PrometheusRule against their schemas with
// strict field validation, so a misspelled field is refused, not dropped.
func TestServerSideDryRunMonitoring(t *testing.T) {
	root := repoRoot(t)
	var crdFiles []string
	for _, name := range []string{"monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml"} {
		crdFiles = append(crdFiles, filepath.Join("bin", "prometheus-crds", name))
	}
	crds, err := ParseFiles(crdFiles...)
	require.NoError(t, err, "prometheus-operator's CRDs in %s/bin/prometheus-crds: run make prometheus-crds", root)

	_, c := startControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	createEstablished(ctx, t, c, crds, "prometheus-operator's CRDs")
	createNamespaces(t, c, releaseNamespace)

	monitoring := []string{"metrics.serviceMonitor.enabled=true", "metrics.prometheusRule.enabled=true"}
	var first *unstructured.Unstructured
	for _, sets := range [][]string{
		nil,
		{"metrics.serviceMonitor.tokenSecret.name=prometheus-uo-token"},
		{"metrics.secure=false", "metrics.port=8080"},
	} {
		data, err := HelmTemplate(ctx, "uo", releaseNamespace, append(slices.Clone(monitoring), sets...)...)
		objs := Select(render(t, data, err), "ServiceMonitor", "PrometheusRule")
		require.Len(t, objs, 2, "%v", sets)
		require.NoError(t, DryRun(ctx, c, objs), "%v", sets)
		if first == nil {
			first = Select(objs, "ServiceMonitor")[0]
		}
		t.Logf("%v: ServiceMonitor and PrometheusRule accepted", sets)
	}

	// The dry run is strict: a misspelled endpoint field is refused.
	bad := first.DeepCopy()
	eps, _, _ := unstructured.NestedSlice(bad.Object, "spec", "endpoints")
	ep := eps[0].(map[string]any)
	ep["bearerTokenFil"] = ep["bearerTokenFile"]
	delete(ep, "bearerTokenFile")
	require.NoError(t, unstructured.SetNestedSlice(bad.Object, eps, "spec", "endpoints"))
	err = DryRun(ctx, c, []*unstructured.Unstructured{bad})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bearerTokenFil")
}
