// Package nodeimages builds the container images the local real node (make
// node) runs, without a registry and without Docker: each image is one
// layer holding static Go binaries (built here with CGO_ENABLED=0), put
// together with github.com/google/go-containerregistry and written as one
// Docker-format archive (`docker save` layout) that
// `ctr -n k8s.io images import` loads into containerd.
//
// The images: the pod sandbox (PauseImage, from ./scenarios/real/nodeimages/pause),
// the demo's worker and API images at every tag the demo, the samples and
// the features use (from ./scenarios/real/nodeimages/demoapp; a "crash" tag exits
// 1), and the operator's own image (OperatorImage, from
// ./cmd/upgrade-operator, as the Dockerfile builds it: /manager, user
// 65532).
package nodeimages

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Image references. PauseImage is containerd's sandbox_image on the real
// node; OperatorImage is the Makefile's default IMG and the chart's image.
const (
	PauseImage    = "localhost/upgrade-operator/pause:3.10"
	OperatorImage = "ghcr.io/lunadas/upgrade-operator:0.1.0"
	// DemoRegistry prefixes the demo's image names (deploy/demo).
	DemoRegistry = "registry.example.com/"
)

// DemoNames are the demo applications' image names, and DemoTags their
// tags: every name:tag pair the demo, the samples and the features use.
// CrashTags are tags whose container exits 1 instead of becoming ready:
// "crash", and "crashloop", the simulator's and kwok's crash-loop marker
// (simulator.ImageTagCrashLoop), so a feature that writes that marker runs
// the same behaviour on the real node.
var (
	DemoNames = []string{"job-worker", "job-api", "shop-db", "shop-worker", "shop-indexer", "shop-api", "api", "cache", "proxy", "sidecar", "filler"}
	DemoTags  = []string{"v1", "v2", "v3", "v1.0.0", "v2.0.0", "v3.0.0", "v4.0.0"}
	CrashTag  = "crash"
	CrashTags = []string{CrashTag, "crashloop"}
)

// Binary is a main package of this module, built into an image.
type Binary struct {
	// Package is the import path relative to the module root ("./cmd/upgrade-operator").
	Package string
	// Name is the file name in bin dir and at the image's root ("manager").
	Name string
}

// Binaries are the programs the images hold.
var Binaries = []Binary{
	{Package: "./scenarios/real/nodeimages/pause", Name: "pause"},
	{Package: "./scenarios/real/nodeimages/demoapp", Name: "demoapp"},
	{Package: "./cmd/upgrade-operator", Name: "manager"},
}

// Image is one image: a reference, the binaries at the root of its single
// layer, and its configuration.
type Image struct {
	Ref        string
	Binaries   []string // names of Binaries, each at /<name>
	Entrypoint []string
	Env        []string
	User       string
}

// Images returns every image of the real node.
func Images() []Image {
	imgs := []Image{
		{Ref: PauseImage, Binaries: []string{"pause"}, Entrypoint: []string{"/pause"}},
		{Ref: OperatorImage, Binaries: []string{"manager"}, Entrypoint: []string{"/manager"}, User: "65532:65532"},
	}
	for _, n := range DemoNames {
		for _, tag := range append(append([]string(nil), DemoTags...), CrashTags...) {
			env := []string{"APP_VERSION=" + n + ":" + tag}
			if slices.Contains(CrashTags, tag) {
				env = append(env, "CRASH=1")
			}
			imgs = append(imgs, Image{Ref: DemoRegistry + n + ":" + tag, Binaries: []string{"demoapp"}, Entrypoint: []string{"/demoapp"}, Env: env})
		}
	}
	return imgs
}

// BuildBinaries builds every Binary statically (CGO_ENABLED=0, -ldflags
// "-s -w", as the Dockerfile does, but without -trimpath: that would give
// every package a new build-cache key and recompile the whole dependency
// graph, ~minutes, for images that never leave this machine) from the
// module at root into outDir with the go command goBin.
func BuildBinaries(ctx context.Context, goBin, root, outDir string) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("nodeimages: create %s: %w", outDir, err)
	}
	for _, b := range Binaries {
		cmd := exec.CommandContext(ctx, goBin, "build", "-ldflags=-s -w", "-o", filepath.Join(outDir, b.Name), b.Package)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("nodeimages: go build %s: %w\n%s", b.Package, err, out)
		}
	}
	return nil
}

// WriteArchive builds images from the binaries in binDir and writes them
// to one Docker-format archive at path (written to a temporary file first,
// so a failed build leaves no half-written archive). Binaries shared by
// several images are stored once: the layers are identical, so the archive
// holds each blob once.
func WriteArchive(path, binDir string, images []Image) error {
	layers := map[string]v1.Layer{}
	refs := map[name.Reference]v1.Image{}
	for _, im := range images {
		key := strings.Join(im.Binaries, ",")
		layer, ok := layers[key]
		if !ok {
			var err error
			if layer, err = binaryLayer(binDir, im.Binaries); err != nil {
				return err
			}
			layers[key] = layer
		}
		img, err := build(layer, im)
		if err != nil {
			return err
		}
		ref, err := name.ParseReference(im.Ref)
		if err != nil {
			return fmt.Errorf("nodeimages: image reference %q: %w", im.Ref, err)
		}
		refs[ref] = img
	}
	tmp := path + ".tmp"
	if err := tarball.MultiRefWriteToFile(tmp, refs); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("nodeimages: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("nodeimages: %w", err)
	}
	return nil
}

func build(layer v1.Layer, im Image) (v1.Image, error) {
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, fmt.Errorf("nodeimages: %s: %w", im.Ref, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("nodeimages: %s: %w", im.Ref, err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Entrypoint = im.Entrypoint
	cf.Config.Env = append([]string{"PATH=/"}, im.Env...)
	cf.Config.User = im.User
	cf.Config.WorkingDir = "/"
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("nodeimages: %s: %w", im.Ref, err)
	}
	return img, nil
}

// binaryLayer is an uncompressed layer with /tmp (mode 1777, for the
// readiness file) and each named binary at /<name>, mode 0755, with a
// fixed modification time so the same binaries give the same digest.
func binaryLayer(binDir string, names []string) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "tmp/", Mode: 0o1777, ModTime: epoch}); err != nil {
		return nil, fmt.Errorf("nodeimages: layer: %w", err)
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	for _, n := range sorted {
		data, err := os.ReadFile(filepath.Join(binDir, n))
		if err != nil {
			return nil, fmt.Errorf("nodeimages: binary %s: %w (run BuildBinaries first)", n, err)
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o755, Size: int64(len(data)), ModTime: epoch}); err != nil {
			return nil, fmt.Errorf("nodeimages: layer: %w", err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("nodeimages: layer: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("nodeimages: layer: %w", err)
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
}
