package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
)

// valueRef matches a template's read of a value: .Values.a.b.c
var valueRef = regexp.MustCompile(`\.Values((?:\.[A-Za-z0-9_]+)+)`)

// chartValueRefs returns every .Values path the chart's templates read.
func chartValueRefs(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(chart + "/templates/*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	refs := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range valueRef.FindAllStringSubmatch(string(data), -1) {
			refs[strings.TrimPrefix(m[1], ".")] = true
		}
	}
	return refs
}

// valueLeaves returns the paths of values.yaml's leaves: scalars, lists
// and empty maps (free-form objects such as resources are leaves too when
// a template reads them whole, see unread).
func valueLeaves(v map[string]any, prefix string, out *[]string) {
	for k, val := range v {
		p := prefix + k
		if sub, ok := val.(map[string]any); ok && len(sub) > 0 {
			valueLeaves(sub, p+".", out)
			continue
		}
		*out = append(*out, p)
	}
}

// unread returns the leaves no template reads, directly or through an
// ancestor the template reads whole (toYaml .Values.manager.resources).
// A top-level map read whole (.Values.manager) would hide everything, so
// only ancestors two levels deep or more count.
func unread(leaves []string, refs map[string]bool) []string {
	var out []string
	for _, l := range leaves {
		read := refs[l]
		parts := strings.Split(l, ".")
		for i := 2; i < len(parts) && !read; i++ {
			read = refs[strings.Join(parts[:i], ".")]
		}
		if !read {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func chartValues(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(chart + "/values.yaml")
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, yaml.Unmarshal(data, &v))
	return v
}

// Every value in values.yaml is read by a template, and every value a
// template reads is in values.yaml (a template reading a misspelt value
// gets nil and renders nothing).
func TestEveryChartValueIsRead(t *testing.T) {
	var leaves []string
	valueLeaves(chartValues(t), "", &leaves)
	require.Greater(t, len(leaves), 30)
	refs := chartValueRefs(t)
	assert.Empty(t, unread(leaves, refs), "values.yaml has values no template reads: remove them or use them")

	known := map[string]bool{}
	var walk func(v map[string]any, prefix string)
	walk = func(v map[string]any, prefix string) {
		for k, val := range v {
			known[prefix+k] = true
			if sub, ok := val.(map[string]any); ok {
				walk(sub, prefix+k+".")
			}
		}
	}
	walk(chartValues(t), "")
	for r := range refs {
		assert.True(t, known[r], "a template reads .Values.%s, which values.yaml does not have", r)
	}
}

// The walk can fail: a value no template reads is reported, and a read of
// a parent two levels deep covers its children while a top-level one does not.
func TestUnreadValuesAreReported(t *testing.T) {
	leaves := []string{"vim.keystoneURL", "manager.resources.limits.cpu", "manager.image.tag"}
	refs := map[string]bool{"manager.resources": true, "manager": true, "manager.image.tag": true}
	assert.Equal(t, []string{"vim.keystoneURL"}, unread(leaves, refs))
	assert.Equal(t, []string{"manager.image.tag"}, unread([]string{"manager.image.tag"}, map[string]bool{"manager": true}))
}

// The credentials Secret's keys are one list (vim.SecretKeys): values.yaml
// and docs/README.md name each of them, and the Secret docs/README.md tells
// users to create is accepted by the code that reads it.
func TestCredentialsSecretKeysAgreeWithDocs(t *testing.T) {
	values, err := os.ReadFile(chart + "/values.yaml")
	require.NoError(t, err)
	docs, err := os.ReadFile("../docs/README.md")
	require.NoError(t, err)
	for _, k := range vim.SecretKeys {
		assert.True(t, strings.Contains(string(values), k.Name), "values.yaml's vim.credentialsSecret comment lacks %s", k.Name)
		assert.True(t, strings.Contains(string(docs), "`"+k.Name+"`"), "docs/README.md's credentials table lacks `%s`", k.Name)
	}
	data := DocsCredentialsSecret(t, docs)
	for k := range data {
		known := false
		for _, sk := range vim.SecretKeys {
			known = known || sk.Name == k
		}
		assert.True(t, known, "docs/README.md's Secret has key %s, which the operator does not read", k)
	}
	_, err = vim.CredentialsFromSecret(data)
	require.NoError(t, err, "the Secret docs/README.md creates must be accepted")
}

// DocsCredentialsSecret returns the data of the Secret created by the
// `kubectl create secret generic` line of docs/README.md's platform
// section (--from-literal=KEY=VALUE pairs).
func DocsCredentialsSecret(t *testing.T, docs []byte) map[string][]byte {
	t.Helper()
	var cmd string
	lines := strings.Split(string(docs), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.Contains(lines[i], "kubectl ") && strings.Contains(lines[i], "create secret generic") {
			cmd = lines[i]
			for strings.HasSuffix(strings.TrimSpace(lines[i]), `\`) && i+1 < len(lines) {
				i++
				cmd += " " + lines[i]
			}
			break
		}
	}
	require.NotEmpty(t, cmd, "docs/README.md has no `kubectl create secret generic` line for the credentials")
	data := map[string][]byte{}
	for _, f := range strings.Fields(strings.ReplaceAll(cmd, `\`, " ")) {
		if kv, ok := strings.CutPrefix(f, "--from-literal="); ok {
			k, v, _ := strings.Cut(strings.Trim(kv, `'"`), "=")
			data[k] = []byte(v)
		}
	}
	require.NotEmpty(t, data)
	return data
}

var metricName = regexp.MustCompile(`upgrade_operator_[a-z_]+`)

// The dashboard is valid JSON and it and the alert rules query only
// metrics the operator defines (a renamed metric would leave an empty
// panel or an alert that never fires).
func TestMonitoringQueriesKnownMetrics(t *testing.T) {
	dash, err := os.ReadFile(chart + "/files/dashboard.json")
	require.NoError(t, err)
	var d map[string]any
	require.NoError(t, json.Unmarshal(dash, &d))
	rules, err := os.ReadFile(chart + "/templates/monitoring.yaml")
	require.NoError(t, err)

	defined := map[string]bool{}
	require.NoError(t, filepath.WalkDir("../operator", func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`"(upgrade_operator_[a-z_]+)"`).FindAllStringSubmatch(string(src), -1) {
			defined[m[1]] = true
		}
		return nil
	}))
	require.True(t, defined["upgrade_operator_starlingx_requests_total"])
	for _, src := range [][]byte{dash, rules} {
		for _, m := range metricName.FindAllString(string(src), -1) {
			base := m
			for _, suf := range []string{"_bucket", "_count", "_sum"} {
				base = strings.TrimSuffix(base, suf)
			}
			assert.True(t, defined[base], "%s queries %s, which the operator does not define", "monitoring", m)
		}
	}
}
