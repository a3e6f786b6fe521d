package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

const chart = "helm/upgrade-operator"

// The chart reads its own generated copies (a chart cannot read files
// outside its directory); `make manifests` writes both from the same
// markers, so they must be byte-identical.
func TestChartGeneratedCopiesMatch(t *testing.T) {
	pairs := map[string]string{
		"rbac/role.yaml":         chart + "/files/rbac/role.yaml",
		"webhook/manifests.yaml": chart + "/files/webhook/manifests.yaml",
	}
	crds, err := filepath.Glob("crd/bases/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, crds)
	for _, c := range crds {
		pairs[c] = chart + "/crds/" + filepath.Base(c)
		if filepath.Base(c) == "upgrades.lunadas.dev_applicationupgrades.yaml" {
			// Rendered by templates/webhook.yaml with its conversion webhook.
			pairs[c] = chart + "/files/crds/" + filepath.Base(c)
		}
	}
	for a, b := range pairs {
		da, err := os.ReadFile(a)
		require.NoError(t, err)
		db, err := os.ReadFile(b)
		require.NoError(t, err, "run make manifests")
		assert.Equal(t, string(da), string(db), "%s and %s differ: run make manifests", a, b)
	}
}

// The Flux manifests name the chart that is here and the values it has.
func TestFluxManifests(t *testing.T) {
	for _, f := range []string{"flux/helmrelease.yaml", "flux/oci/helmrelease.yaml"} {
		var hr struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Spec       struct {
				TargetNamespace string `json:"targetNamespace"`
				Chart           struct {
					Spec struct {
						Chart     string                `json:"chart"`
						SourceRef struct{ Kind string } `json:"sourceRef"`
					} `json:"spec"`
				} `json:"chart"`
				ChartRef struct{ Kind, Name string } `json:"chartRef"`
				Values   map[string]any              `json:"values"`
			} `json:"spec"`
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, yaml.Unmarshal(data, &hr), f)
		assert.Equal(t, "helm.toolkit.fluxcd.io/v2", hr.APIVersion, f)
		assert.Equal(t, "HelmRelease", hr.Kind, f)
		assert.Equal(t, "upgrade-operator-system", hr.Spec.TargetNamespace, f)
		if hr.Spec.Chart.Spec.SourceRef.Kind == "GitRepository" {
			path := strings.TrimPrefix(hr.Spec.Chart.Spec.Chart, "./deploy/")
			_, err := os.Stat(filepath.Join(path, "Chart.yaml"))
			assert.NoError(t, err, "%s: chart path %s", f, hr.Spec.Chart.Spec.Chart)
		}
		assertKnownValues(t, f, hr.Spec.Values, "")
	}
}

// assertKnownValues fails on a HelmRelease value the chart's values.yaml
// does not have (a typo would be ignored by Helm).
func assertKnownValues(t *testing.T, file string, values map[string]any, prefix string) {
	t.Helper()
	data, err := os.ReadFile(chart + "/values.yaml")
	require.NoError(t, err)
	var defaults map[string]any
	require.NoError(t, yaml.Unmarshal(data, &defaults))
	var walk func(v, d map[string]any, path string)
	walk = func(v, d map[string]any, path string) {
		for k, val := range v {
			dv, ok := d[k]
			if !assert.True(t, ok, "%s: value %s%s is not in the chart's values.yaml", file, path, k) {
				continue
			}
			if sub, ok := val.(map[string]any); ok {
				if dsub, ok := dv.(map[string]any); ok {
					walk(sub, dsub, path+k+".")
				}
			}
		}
	}
	walk(values, defaults, prefix)
}

// The Flux example's paths exist in the GitRepository's artifact (its
// ignore keeps "/*" out and lets the "!/dir/" entries back in), its health
// check reads the stored version (no conversion webhook needed), and the
// OCI variant uses OCIRepository + chartRef.
func TestFluxPathsExistInTheArtifact(t *testing.T) {
	var repo struct {
		Spec struct{ Ignore string } `json:"spec"`
	}
	data, err := os.ReadFile("flux/gitrepository.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &repo))
	lines := strings.Fields(repo.Spec.Ignore)
	require.Equal(t, "/*", lines[0], "the artifact starts from nothing")
	kept := func(p string) bool {
		for _, l := range lines[1:] {
			if dir, ok := strings.CutPrefix(l, "!/"); ok && strings.HasPrefix(strings.TrimPrefix(p, "./")+"/", dir) {
				return true
			}
		}
		return false
	}
	var ks struct {
		Spec struct {
			Path         string `json:"path"`
			HealthChecks []struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Name       string `json:"name"`
			} `json:"healthChecks"`
		} `json:"spec"`
	}
	data, err = os.ReadFile("flux/applicationupgrade-kustomization.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &ks))
	for _, p := range []string{ks.Spec.Path, "./deploy/helm/upgrade-operator"} {
		assert.True(t, kept(p), "%s is not in the GitRepository's artifact (ignore)", p)
		_, err := os.Stat(filepath.Join("..", p))
		assert.NoError(t, err, p)
	}
	require.NotEmpty(t, ks.Spec.HealthChecks)
	for _, h := range ks.Spec.HealthChecks {
		assert.Equal(t, "upgrades.lunadas.dev/v1beta1", h.APIVersion, "health checks read the stored version")
		matches, _ := filepath.Glob(filepath.Join("..", ks.Spec.Path, "*.yaml"))
		found := false
		for _, m := range matches {
			b, _ := os.ReadFile(m)
			found = found || strings.Contains(string(b), "name: "+h.Name)
		}
		assert.True(t, found, "health check %s names an object the path applies", h.Name)
	}
	oci, err := os.ReadFile("flux/oci/helmrelease.yaml")
	require.NoError(t, err)
	assert.Contains(t, string(oci), "chartRef:\n    kind: OCIRepository")
	assert.NotContains(t, string(oci), "HelmRepository")
}
