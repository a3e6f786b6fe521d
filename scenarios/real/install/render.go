// Package install checks the ways the operator is installed: it renders the
// kustomize bases and the Helm chart under deploy/ with bin/kustomize and
// bin/helm (make tools), checks the rendered RBAC for least privilege,
// server-side dry-runs rendered objects, and mints ServiceAccount tokens so
// the manager can run with exactly the rendered permissions.
package install

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
)

// ChartDir is the Helm chart's path inside the repository.
const ChartDir = "deploy/helm/upgrade-operator"

// Tool returns the path of bin/<name> in the repository, or an error that
// says how to build it.
func Tool(name string) (string, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, "bin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not found: run 'make tools' to build bin/kustomize, bin/helm and bin/kubectl: %w", p, err)
	}
	return p, nil
}

// Kustomize renders dir (relative to the repository root) with bin/kustomize.
func Kustomize(ctx context.Context, dir string) ([]byte, error) {
	return runTool(ctx, "kustomize", "build", dir)
}

// HelmTemplate renders the chart as release name in namespace, with
// `--set` values (e.g. "watchNamespaces={job-system}").
func HelmTemplate(ctx context.Context, release, namespace string, sets ...string) ([]byte, error) {
	args := []string{"template", release, ChartDir, "--namespace", namespace}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return runTool(ctx, "helm", args...)
}

func runTool(ctx context.Context, name string, args ...string) ([]byte, error) {
	bin, err := Tool(name)
	if err != nil {
		return nil, err
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Parse splits multi-document YAML into objects, skipping empty documents.
func Parse(data []byte) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d: no kind or apiVersion", doc)
		}
		out = append(out, u)
	}
}

// ParseFiles parses every file (paths relative to the repository root).
func ParseFiles(paths ...string) ([]*unstructured.Unstructured, error) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		objs, err := Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// Name is "Kind namespace/name" (or "Kind name" when cluster-scoped).
func Name(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

// Select returns the objects whose kind is one of kinds.
func Select(objs []*unstructured.Unstructured, kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		for _, k := range kinds {
			if o.GetKind() == k {
				out = append(out, o)
				break
			}
		}
	}
	return out
}
