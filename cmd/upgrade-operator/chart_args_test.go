package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// argFlag matches a manager argument in a manifest: "- --name" or "- --name=value".
var argFlag = regexp.MustCompile(`(?m)^\s*-\s+--([a-z0-9-]+)`)

// patchFlag matches an argument added by a JSON patch: "value: --name=...".
var patchFlag = regexp.MustCompile(`(?m)^\s*value:\s+--([a-z0-9-]+)`)

// Every flag the chart's and the kustomize bases' manager Deployment pass
// is a flag of this command (an unknown flag makes the manager exit), and
// neither sets environment variables (nothing but the flags' defaults
// reads them; a value passed that way was silently unread before) — except
// the chart's manager.env, which the template restricts to client-go's
// in-cluster KUBERNETES_SERVICE_HOST and _PORT (TestHelmRefusesBadValues
// checks the refusal).
func TestManifestsPassOnlyKnownFlags(t *testing.T) {
	cmd := newCommand()
	for _, f := range []string{
		"../../deploy/helm/upgrade-operator/templates/deployment.yaml",
		"../../deploy/manager/manager.yaml",
		"../../deploy/components/platform/kustomization.yaml",
	} {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		found := argFlag.FindAllStringSubmatch(string(data), -1)
		if strings.HasSuffix(f, "kustomization.yaml") {
			found = patchFlag.FindAllStringSubmatch(string(data), -1)
		}
		require.NotEmpty(t, found, f)
		for _, m := range found {
			assert.NotNil(t, cmd.Flags().Lookup(m[1]), "%s passes --%s, which upgrade-operator does not have", f, m[1])
		}
		text := string(data)
		if strings.HasSuffix(f, "deployment.yaml") {
			assert.Contains(t, text, `has .name (list "KUBERNETES_SERVICE_HOST" "KUBERNETES_SERVICE_PORT")`, "manager.env is restricted")
			text = strings.Replace(text, "{{- with .Values.manager.env }}\n          env:", "", 1)
		}
		assert.NotContains(t, text, "env:", f)
	}
}
