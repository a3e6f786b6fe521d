package controlplane

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var stageAnnotation = regexp.MustCompile(`[a-z-]+\.stage\.kwok\.x-k8s\.io/[a-z-]+`)

// TestStageAnnotationsDocumented keeps deploy/kwok/README.md (the contract
// the simulator's kubelet model follows) in step with the Stage files.
func TestStageAnnotationsDocumented(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "deploy", "kwok", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := stageFiles(filepath.Join(root, "deploy", "kwok", "stages"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range stageAnnotation.FindAllString(string(data), -1) {
			seen++
			if !strings.Contains(string(readme), "`"+a+"`") {
				t.Errorf("%s uses annotation %s, not documented in deploy/kwok/README.md", filepath.Base(f), a)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no stage annotations found")
	}
}
