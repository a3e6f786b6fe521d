package controlplane

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lunadas/upgrade-operator/simulator"
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

var (
	markerEndsWith = regexp.MustCompile(`endswith\(":([a-z0-9.-]+)"\)`)
	markerTest     = regexp.MustCompile(`test\(":\(([a-z0-9.|-]+)\)\$"\)`)
)

// stageMarkers are the image markers a Stage file's selectors name.
func stageMarkers(t *testing.T, file string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range markerEndsWith.FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = true
	}
	for _, m := range markerTest.FindAllStringSubmatch(string(data), -1) {
		for _, tag := range strings.Split(m[1], "|") {
			out[tag] = true
		}
	}
	return out
}

// TestStagesCoverEveryImageMarker keeps the kwok Stages and the
// simulator's kubelet model on one set of image markers: every marker has
// a Stage selecting it, no Stage selects a marker the simulator does not
// know, and pod-create (the normal start) excludes exactly the markers.
func TestStagesCoverEveryImageMarker(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := stageFiles(filepath.Join(root, "deploy", "kwok", "stages"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, m := range simulator.ImageMarkers {
		want[m] = true
	}
	all := map[string]bool{}
	var create map[string]bool
	for _, f := range files {
		ms := stageMarkers(t, f)
		for m := range ms {
			all[m] = true
		}
		if filepath.Base(f) == "pod-create.yaml" {
			create = ms
		}
	}
	if !maps.Equal(all, want) {
		t.Errorf("stages name markers %v, the simulator's kubelet knows %v", sortedKeys(all), simulator.ImageMarkers)
	}
	if !maps.Equal(create, want) {
		t.Errorf("pod-create excludes markers %v, want every one of %v", sortedKeys(create), simulator.ImageMarkers)
	}
}

func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}
