package realcluster

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
)

// The harness's conversion server answers a ConversionReview over TLS with
// the CA it hands out: a v1alpha1 upgrade comes back as the v1beta1
// worker -> api chain.
func TestLocalConversionServesConversionReviews(t *testing.T) {
	conv, err := LocalConversion()
	require.NoError(t, err)
	again, err := LocalConversion()
	require.NoError(t, err)
	assert.Equal(t, *conv.Webhook.ClientConfig.URL, *again.Webhook.ClientConfig.URL, "one server per process")

	obj := []byte(`{"apiVersion":"upgrades.lunadas.dev/v1alpha1","kind":"ApplicationUpgrade",
		"metadata":{"name":"upgrade-v2","namespace":"job-system"},
		"spec":{"worker":{"deploymentRef":{"name":"job-worker"},"image":"w:v2"},"api":{"deploymentRef":{"name":"job-api"},"image":"a:v2"}}}`)
	review := apiextensionsv1.ConversionReview{
		Request: &apiextensionsv1.ConversionRequest{UID: types.UID("1"), DesiredAPIVersion: "upgrades.lunadas.dev/v1beta1",
			Objects: []runtime.RawExtension{{Raw: obj}}},
	}
	review.APIVersion, review.Kind = "apiextensions.k8s.io/v1", "ConversionReview"
	body, err := json.Marshal(review)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(conv.Webhook.ClientConfig.CABundle))
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := hc.Post(*conv.Webhook.ClientConfig.URL, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out apiextensionsv1.ConversionReview
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotNil(t, out.Response)
	require.Equal(t, "Success", out.Response.Result.Status, out.Response.Result.Message)
	require.Len(t, out.Response.ConvertedObjects, 1)
	var u v1beta1.ApplicationUpgrade
	require.NoError(t, json.Unmarshal(out.Response.ConvertedObjects[0].Raw, &u))
	require.Len(t, u.Spec.Components, 2)
	assert.Equal(t, "worker", u.Spec.Components[0].Name)
	assert.Equal(t, []string{"worker"}, u.Spec.Components[1].DependsOn)
}
