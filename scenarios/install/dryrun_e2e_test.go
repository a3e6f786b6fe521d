//go:build e2e

package install

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// `kubectl apply --dry-run=server` of every rendering against the local
// control plane: the API server validates each object (built-in schemas,
// the CRDs' schemas, admission) and stores nothing. The CRDs and the two
// namespaces are created for real first, as a first `kubectl apply` would
// have done by the time the namespaced objects arrive.
func TestServerSideDryRun(t *testing.T) {
	_, c := startControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	createNamespaces(t, c, releaseNamespace, appNamespace)

	renderings := map[string]func() ([]byte, error){
		"kustomize deploy/default":           func() ([]byte, error) { return Kustomize(ctx, "deploy/default") },
		"kustomize deploy/samples":           func() ([]byte, error) { return Kustomize(ctx, "deploy/samples") },
		"kustomize deploy/webhook":           func() ([]byte, error) { return Kustomize(ctx, "deploy/webhook") },
		"kustomize deploy/overlays/platform": func() ([]byte, error) { return Kustomize(ctx, "deploy/overlays/platform") },
		"helm (defaults)":                    func() ([]byte, error) { return HelmTemplate(ctx, "uo", releaseNamespace) },
		"helm watchNamespaces": func() ([]byte, error) {
			return HelmTemplate(ctx, "uo", releaseNamespace, "watchNamespaces={"+appNamespace+"}")
		},
		"helm platform, VIM, 2 replicas": func() ([]byte, error) {
			return HelmTemplate(ctx, "uo", releaseNamespace, "platform.enabled=true", "vim.endpoint=http://controller:4545",
				"vim.credentialsSecret=keystone", "manager.replicas=3", "metrics.secure=true")
		},
	}
	for name, r := range renderings {
		t.Run(name, func(t *testing.T) {
			data, err := r()
			var objs []*unstructured.Unstructured
			for _, o := range render(t, data, err) {
				// The local control plane has no cert-manager CRDs (deploy/default's Issuer and Certificate).
				if o.GroupVersionKind().Group == "cert-manager.io" {
					t.Logf("skipped %s %s: cert-manager is not installed", o.GetKind(), Name(o))
					continue
				}
				objs = append(objs, o)
			}
			require.NoError(t, DryRun(ctx, c, objs))
			t.Logf("%d objects accepted", len(objs))
		})
	}
	// The demo app is plain files (kubectl apply -f deploy/demo/).
	demo, err := ParseFiles("deploy/demo/namespace.yaml", "deploy/demo/job-worker.yaml", "deploy/demo/job-api.yaml")
	require.NoError(t, err)
	require.NoError(t, DryRun(ctx, c, demo))

	// A broken object is refused: the dry run can fail.
	data, err := HelmTemplate(ctx, "uo", releaseNamespace)
	bad := render(t, data, err)
	for _, o := range Select(bad, "Deployment") {
		require.NoError(t, unstructured.SetNestedField(o.Object, "not-a-number", "spec", "replicas"))
	}
	require.Error(t, DryRun(ctx, c, Select(bad, "Deployment")))
}

// `kubectl apply --dry-run=server -f deploy/demo-graph/` (the graph demo
// `make simulate ARGS="--manifests deploy/demo-graph"` runs): the API
// server accepts the namespace, the four Deployments and the v1beta1
// diamond (its CRD schema, CEL rules included). The namespace is created
// for real first, as the first file of the apply would be.
func TestGraphDemoServerSideDryRun(t *testing.T) {
	_, c := startControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	createNamespaces(t, c, "shop")
	objs, err := ParseFiles("deploy/demo-graph/namespace.yaml", "deploy/demo-graph/shop-db.yaml", "deploy/demo-graph/shop-worker.yaml",
		"deploy/demo-graph/shop-indexer.yaml", "deploy/demo-graph/shop-api.yaml", "deploy/demo-graph/upgrade-shop-v3.yaml")
	require.NoError(t, err)
	require.Len(t, objs, 6)
	require.NoError(t, DryRun(ctx, c, objs))
}

// `kubectl apply -k deploy/sweep --dry-run=server`: the seed sweep's
// Indexed Job (docs/sweeps.md) is a Job the API server accepts as written
// (batch/v1 validation: completionMode Indexed with backoffLimitPerIndex,
// the pod's security context). Its namespace is created for real first.
// The kwok node runs no containers, so the shards themselves run in
// cmd/simulate's TestSweepJobShardsMergeToTheUnshardedRun.
func TestServerSideDryRunSweepJob(t *testing.T) {
	_, c := startControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	createNamespaces(t, c, "upgrade-sweep")
	data, err := Kustomize(ctx, "deploy/sweep")
	objs := render(t, data, err)
	require.Len(t, Select(objs, "Job"), 1)
	require.NoError(t, DryRun(ctx, c, objs))

	// The server did validate the Job: without completionMode Indexed its
	// backoffLimitPerIndex is refused.
	job := Select(render(t, data, err), "Job")
	unstructured.RemoveNestedField(job[0].Object, "spec", "completionMode")
	require.ErrorContains(t, DryRun(ctx, c, job), "backoffLimitPerIndex")
}
