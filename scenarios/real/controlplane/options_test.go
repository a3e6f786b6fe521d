package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRepoRootSkipsToolsModules(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if !isRootModule(filepath.Join(root, "go.mod")) {
		t.Fatalf("RepoRoot() = %s, whose go.mod is not module %s", root, rootModule)
	}
	if isRootModule(filepath.Join(root, "hack", "tools", "kube", "go.mod")) {
		t.Fatal("hack/tools/kube/go.mod taken for the root module")
	}
}

func TestCheckBinariesNamesTheMakeTarget(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// A directory inside the repository that never holds the binaries.
	err = checkBinaries(filepath.Join(root, "scenarios", "real", "controlplane"))
	if err == nil {
		t.Fatal("checkBinaries found binaries in a source directory")
	}
	want := "controlplane: scenarios/real/controlplane/kube-apiserver not found: run 'make controlplane'"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
}

func TestStartWithoutBinariesFailsClearly(t *testing.T) {
	dir := t.TempDir()
	_, err := Start(t.Context(), Options{BinDir: dir, StagesDir: dir})
	if err == nil {
		t.Fatal("Start succeeded without binaries")
	}
	want := filepath.Join(dir, "etcd") + " not found: run 'make controlplane'"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("Start left files in %s: %v", dir, entries)
	}
}

func TestFreePortsDistinct(t *testing.T) {
	ports, err := freePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v not distinct and positive", ports)
		}
		seen[p] = true
	}
}
