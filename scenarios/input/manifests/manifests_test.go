package manifests

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/lunadas/upgrade-operator/deploy"
	v1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1.AddToScheme(s))
	return s
}

func TestLoadDemo(t *testing.T) {
	objs, err := LoadFS(deploy.Demo, ".", scheme())
	require.NoError(t, err)
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName())
	}
	assert.ElementsMatch(t, []string{"Deployment/job-api", "Deployment/job-worker", "Namespace/job-system", "ApplicationUpgrade/upgrade-v2"}, kinds)
}

func TestLoadErrorsAreOneReadableLine(t *testing.T) {
	cases := map[string]struct{ file, want string }{
		"unknown kind":  {"apiVersion: v1\nkind: Frobnicator\nmetadata: {name: x}\n", `bad.yaml: document 1: no kind "Frobnicator" is registered for version "v1"`},
		"unknown field": {"apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\nspecc: {}\n", `bad.yaml: document 1: strict decoding error: unknown field "specc"`},
		"not yaml":      {"apiVersion: v1\nkind: [\n", "bad.yaml: document 1:"},
		"second doc":    {"apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\nkind: Namespace\n", "bad.yaml: document 2:"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := LoadFS(fstest.MapFS{"bad.yaml": {Data: []byte(tc.file)}}, ".", scheme())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n")
			assert.NotContains(t, err.Error(), `in scheme "`, "the scheme's source line is noise")
		})
	}
	_, err := LoadFS(fstest.MapFS{"README.md": {Data: []byte("x")}}, ".", scheme())
	assert.EqualError(t, err, "no *.yaml manifests in .")
}
