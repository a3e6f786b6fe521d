//go:build e2e

package install

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Every in-cluster rendering serves the ApplicationUpgrade conversion
// webhook: the CRD's spec.conversion is Webhook, through the manager's
// webhook Service at /convert, with a CA (cert-manager's injection
// annotation, or the chart's own bundle), and the manager has the webhook
// port and the serving certificate mounted.
func TestConversionStanza(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		render           func() ([]byte, error)
		service, inject  string
		wantCABundle     bool
		validatingConfig bool
	}{
		"kustomize deploy/default": {render: func() ([]byte, error) { return Kustomize(ctx, "deploy/default") },
			service: "upgrade-operator-webhook", inject: "upgrade-operator-system/upgrade-operator-webhook", validatingConfig: true},
		"helm (in-process rotation)": {render: func() ([]byte, error) { return HelmTemplate(ctx, "uo", releaseNamespace) },
			service: "uo-upgrade-operator-webhook", validatingConfig: true},
		"helm cert-manager": {render: func() ([]byte, error) {
			return HelmTemplate(ctx, "uo", releaseNamespace, "webhook.certManager.enabled=true")
		}, service: "uo-upgrade-operator-webhook", inject: releaseNamespace + "/uo-upgrade-operator-webhook", validatingConfig: true},
		"helm webhook.enabled=false keeps conversion": {render: func() ([]byte, error) {
			return HelmTemplate(ctx, "uo", releaseNamespace, "webhook.enabled=false")
		}, service: "uo-upgrade-operator-webhook"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			data, err := tc.render()
			objs := render(t, data, err)
			var crd *unstructured.Unstructured
			for _, o := range Select(objs, "CustomResourceDefinition") {
				if o.GetName() == "applicationupgrades.upgrades.lunadas.dev" {
					crd = o
				}
			}
			require.NotNil(t, crd, "the ApplicationUpgrade CRD is rendered")
			strategy, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "strategy")
			assert.Equal(t, "Webhook", strategy)
			svc, _, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook", "clientConfig", "service")
			assert.Equal(t, tc.service, svc["name"])
			assert.Equal(t, releaseNamespace, svc["namespace"])
			assert.Equal(t, "/convert", svc["path"])
			versions, _, _ := unstructured.NestedStringSlice(crd.Object, "spec", "conversion", "webhook", "conversionReviewVersions")
			assert.Equal(t, []string{"v1"}, versions)
			ca, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "caBundle")
			assert.Equal(t, tc.wantCABundle, ca != "", "caBundle")
			assert.Equal(t, tc.inject, crd.GetAnnotations()["cert-manager.io/inject-ca-from"])

			services := map[string]bool{}
			for _, s := range Select(objs, "Service") {
				services[s.GetName()] = true
			}
			assert.True(t, services[tc.service], "the conversion Service %s is rendered", tc.service)
			assert.Len(t, Select(objs, "ValidatingWebhookConfiguration"), map[bool]int{true: 1, false: 0}[tc.validatingConfig])
			deps := Select(objs, "Deployment")
			require.Len(t, deps, 1)
			ports, _, _ := unstructured.NestedSlice(deps[0].Object, "spec", "template", "spec", "containers")
			require.NotEmpty(t, ports)
			assert.Contains(t, toString(ports[0]), "webhook-certs", "the serving certificate is mounted")
			assert.Contains(t, toString(ports[0]), "name:webhook", "the webhook port is declared")
		})
	}
}

func toString(v any) string {
	var b []byte
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok {
					b = append(b, k+":"+s+" "...)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return string(b)
}
