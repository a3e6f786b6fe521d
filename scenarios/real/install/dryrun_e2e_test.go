//go:build e2e

package install

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
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
				"vim.credentialsSecret=keystone", "manager.replicas=3")
		},
		"helm plain-HTTP metrics": func() ([]byte, error) {
			return HelmTemplate(ctx, "uo", releaseNamespace, "metrics.secure=false", "metrics.port=8080")
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

// `kubectl apply --dry-run=server` of every Flux manifest under deploy/flux
// (the kustomizations as kustomize renders them, and the example
// Kustomization file) with Flux's CRDs installed (`make flux-crds`:
// generated from the Flux API modules): the API server validates them
// against Flux's schemas with strict field validation. The HelmReleases'
// values render the chart, the Flux Kustomization's path exists, and its
// health check names an object that path holds.
func TestFluxManifestsServerSideDryRun(t *testing.T) {
	root := repoRoot(t)
	crdFiles, err := filepath.Glob(filepath.Join(root, "bin", "flux-crds", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, crdFiles, "no Flux CRDs in bin/flux-crds: run make flux-crds")
	for i, f := range crdFiles {
		crdFiles[i], err = filepath.Rel(root, f) // ParseFiles reads paths from the repository's root
		require.NoError(t, err)
	}
	crds, err := ParseFiles(crdFiles...)
	require.NoError(t, err)

	_, c := startControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	createEstablished(ctx, t, c, crds, "Flux's CRDs")
	createNamespaces(t, c, "flux-system")

	var all []*unstructured.Unstructured
	for _, dir := range []string{"deploy/flux", "deploy/flux/oci"} {
		data, err := Kustomize(ctx, dir)
		all = append(all, render(t, data, err)...)
	}
	example, err := ParseFiles("deploy/flux/applicationupgrade-kustomization.yaml")
	require.NoError(t, err)
	all = append(all, example...)
	kinds := map[string]int{}
	for _, o := range all {
		kinds[o.GetKind()]++
		require.NoError(t, DryRun(ctx, c, []*unstructured.Unstructured{o}), "%s", Name(o))
	}
	assert.Equal(t, map[string]int{"GitRepository": 1, "OCIRepository": 1, "HelmRelease": 2, "Kustomization": 1}, kinds)

	// A misspelled field is refused: the dry run is strict.
	bad := example[0].DeepCopy()
	require.NoError(t, unstructured.SetNestedField(bad.Object, "10m", "spec", "intervall"))
	err = DryRun(ctx, c, []*unstructured.Unstructured{bad})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown field "spec.intervall"`)

	for _, hr := range Select(all, "HelmRelease") {
		values, found, err := unstructured.NestedMap(hr.Object, "spec", "values")
		require.NoError(t, err)
		require.True(t, found)
		data, err := yaml.Marshal(values)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "values.yaml")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		out, err := runTool(ctx, "helm", "template", "uo", ChartDir, "--namespace", releaseNamespace, "--values", path)
		require.NoError(t, err, "the HelmRelease's values render the chart: %s", out)
	}

	ks := example[0]
	path, _, _ := unstructured.NestedString(ks.Object, "spec", "path")
	samples, err := filepath.Glob(filepath.Join(root, path, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, samples, "the Kustomization's path %s holds manifests", path)
	for i, f := range samples {
		samples[i], err = filepath.Rel(root, f)
		require.NoError(t, err)
	}
	objs, err := ParseFiles(samples...)
	require.NoError(t, err)
	checks, _, _ := unstructured.NestedSlice(ks.Object, "spec", "healthChecks")
	require.NotEmpty(t, checks)
	for _, hc := range checks {
		m := hc.(map[string]any)
		assert.True(t, slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool {
			return o.GetAPIVersion() == m["apiVersion"] && o.GetKind() == m["kind"] && o.GetName() == m["name"] && o.GetNamespace() == m["namespace"]
		}), "health check %v names an object of %s", m, path)
	}
}

// createEstablished creates the CustomResourceDefinitions crds and waits
// (up to a minute) until the API server reports each Established; what
// names them in the failure.
func createEstablished(ctx context.Context, t *testing.T, c client.Client, crds []*unstructured.Unstructured, what string) {
	t.Helper()
	require.NoError(t, CreateAll(ctx, c, crds))
	require.NoError(t, wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, crd := range crds {
			var live apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: crd.GetName()}, &live); err != nil {
				return false, err
			}
			if !slices.ContainsFunc(live.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
				return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
			}) {
				return false, nil
			}
		}
		return true, nil
	}), "%s established", what)
}
