//go:build e2e

package install

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Argo CD runs `helm template`: two renders of the same values must be
// byte-identical, or every refresh shows drift and every sync restarts the
// operator. Nothing random is rendered (no genCA, no caBundle, no Secret
// data); the rotator or cert-manager writes them in the cluster.
func TestChartRendersAreIdentical(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, sets := range [][]string{nil, {"platform.enabled=true", "vim.credentialsSecret=keystone"}, {"webhook.certManager.enabled=true"}} {
		a, err := HelmTemplate(ctx, "uo", releaseNamespace, sets...)
		require.NoError(t, err)
		b, err := HelmTemplate(ctx, "uo", releaseNamespace, sets...)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(a, b), "two renders of %v differ", sets)
		assert.NotContains(t, string(a), "caBundle")
		for _, s := range Select(render(t, a, nil), "Secret") {
			_, has := s.Object["data"]
			assert.False(t, has, "Secret %s is rendered with data", Name(s))
		}
	}
}

// platform.enabled wires the platform controller: --platform, the mounted
// credentials, the Upgrade webhook; without it neither the flag nor the
// Upgrade webhook (nothing would serve it: every Upgrade write would fail).
func TestChartPlatformWiring(t *testing.T) {
	ctx := context.Background()
	on, err := HelmTemplate(ctx, "uo", releaseNamespace, "platform.enabled=true", "vim.credentialsSecret=keystone", "vim.endpoint=http://controller:4545")
	objs := render(t, on, err)
	args := managerArgs(t, objs)
	assert.Contains(t, args, "--platform")
	assert.Contains(t, args, "--starlingx-credentials-dir=/etc/upgrade-operator/keystone")
	assert.Contains(t, args, "--vim-url=http://controller:4545")
	assert.Contains(t, string(on), "secretName: keystone")
	assert.Equal(t, []string{"vapplicationupgrade.upgrades.lunadas.dev", "vupgrade.upgrade.starlingx.io"}, webhookNames(t, objs))
	assert.NotEmpty(t, Select(objs, "ClusterRole"))

	off, err := HelmTemplate(ctx, "uo", releaseNamespace)
	objs = render(t, off, err)
	assert.NotContains(t, managerArgs(t, objs), "--platform")
	assert.Equal(t, []string{"vapplicationupgrade.upgrades.lunadas.dev"}, webhookNames(t, objs))

	for dir, want := range map[string][]string{
		"deploy/default":           {"vapplicationupgrade.upgrades.lunadas.dev"},
		"deploy/overlays/platform": {"vapplicationupgrade.upgrades.lunadas.dev", "vupgrade.upgrade.starlingx.io"},
	} {
		data, err := Kustomize(ctx, dir)
		objs := render(t, data, err)
		assert.Equal(t, want, webhookNames(t, objs), dir)
		assert.Equal(t, len(want) == 2, strings.Contains(strings.Join(managerArgs(t, objs), " "), "--platform"), dir)
	}
}

// High availability by default: 2 replicas with leader election, a
// PodDisruptionBudget keeping one, spread over nodes, and a readiness probe
// (which includes the webhook server) so only serving replicas get traffic.
func TestChartHighAvailability(t *testing.T) {
	for _, r := range []func() ([]byte, error){
		func() ([]byte, error) { return HelmTemplate(context.Background(), "uo", releaseNamespace) },
		func() ([]byte, error) { return Kustomize(context.Background(), "deploy/default") },
	} {
		data, err := r()
		objs := render(t, data, err)
		dep := Select(objs, "Deployment")[0]
		assert.EqualValues(t, 2, number(dep.Object, "spec", "replicas"))
		assert.Contains(t, managerArgs(t, objs), "--leader-elect")
		spread, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "topologySpreadConstraints")
		assert.NotEmpty(t, spread)
		pdbs := Select(objs, "PodDisruptionBudget")
		require.Len(t, pdbs, 1)
		assert.EqualValues(t, 1, number(pdbs[0].Object, "spec", "minAvailable"))
	}
	data, err := HelmTemplate(context.Background(), "uo", releaseNamespace, "manager.replicas=1")
	assert.Empty(t, Select(render(t, data, err), "PodDisruptionBudget"), "no PDB for one replica: it would block every drain")
}

func webhookNames(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var names []string
	for _, v := range Select(objs, "ValidatingWebhookConfiguration") {
		hooks, _, _ := unstructured.NestedSlice(v.Object, "webhooks")
		for _, h := range hooks {
			names = append(names, h.(map[string]any)["name"].(string))
		}
	}
	return names
}

// number reads a JSON number (float64 after YAML decoding, or int64).
func number(obj map[string]any, fields ...string) float64 {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	switch n := v.(type) {
	case float64:
		return n
	case int64:
		return float64(n)
	}
	return -1
}

// webhook.url (the operator on the node's network, make
// test-node-incluster): the CRD's conversion and every admission webhook
// call the URL with their own path, no webhook Service is rendered, and
// the rotated certificate is issued for the URL's host. hostNetwork and
// env reach the pod.
func TestChartWebhookURL(t *testing.T) {
	data, err := HelmTemplate(context.Background(), "uo", releaseNamespace, "webhook.url=https://localhost:9443",
		"manager.hostNetwork=true", "manager.env[0].name=KUBERNETES_SERVICE_HOST", "manager.env[0].value=127.0.0.1")
	objs := render(t, data, err)
	crds := Select(objs, "CustomResourceDefinition")
	require.Len(t, crds, 1)
	url, _, _ := unstructured.NestedString(crds[0].Object, "spec", "conversion", "webhook", "clientConfig", "url")
	assert.Equal(t, "https://localhost:9443/convert", url)
	_, hasSvc, _ := unstructured.NestedMap(crds[0].Object, "spec", "conversion", "webhook", "clientConfig", "service")
	assert.False(t, hasSvc)
	for _, v := range Select(objs, "ValidatingWebhookConfiguration") {
		hooks, _, _ := unstructured.NestedSlice(v.Object, "webhooks")
		require.NotEmpty(t, hooks)
		for _, h := range hooks {
			cc := h.(map[string]any)["clientConfig"].(map[string]any)
			assert.Regexp(t, `^https://localhost:9443/validate-`, cc["url"])
			assert.NotContains(t, cc, "service")
		}
	}
	for _, s := range Select(objs, "Service") {
		assert.NotEqual(t, "uo-upgrade-operator-webhook", s.GetName(), "no webhook Service in URL mode")
	}
	assert.Contains(t, managerArgs(t, objs), "--cert-dns-name=localhost")
	dep := Select(objs, "Deployment")[0]
	hostNet, _, _ := unstructured.NestedBool(dep.Object, "spec", "template", "spec", "hostNetwork")
	assert.True(t, hostNet)
	assert.Contains(t, string(data), "dnsPolicy: ClusterFirstWithHostNet")
	assert.Contains(t, string(data), "name: KUBERNETES_SERVICE_HOST")
}
