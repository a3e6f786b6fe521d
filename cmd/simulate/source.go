package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing/fstest"
	"time"
)

// manifestSource returns the manifests of --manifests - (stdin) or of a
// kustomize directory (one holding a kustomization.yaml, built with the
// kustomize binary on PATH or in ./bin) as a one-file FS; nil for a plain
// directory or the embedded demo.
func manifestSource(o options) (fs.FS, error) {
	dir := o.manifestsDir
	if dir == "-" {
		data, err := io.ReadAll(io.LimitReader(o.stdin, 64<<20))
		if err != nil {
			return nil, fmt.Errorf("--manifests -: read stdin: %w", err)
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, fmt.Errorf("--manifests -: stdin is empty: pipe YAML manifests in (e.g. kustomize build DIR | simulate --manifests -)")
		}
		return fstest.MapFS{"stdin.yaml": {Data: data}}, nil
	}
	if dir == "" || !isKustomization(dir) {
		return nil, nil
	}
	bin, err := kustomizeBinary()
	if err != nil {
		return nil, fmt.Errorf("--manifests %s is a kustomize directory: %w", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "build", dir)
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("--manifests %s: kustomize build: %w: %s", dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return fstest.MapFS{"kustomize.yaml": {Data: data}}, nil
}

func isKustomization(dir string) bool {
	for _, n := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// kustomizeBinary is kustomize on PATH, else ./bin/kustomize (make kustomize).
func kustomizeBinary() (string, error) {
	if p, err := exec.LookPath("kustomize"); err == nil {
		return p, nil
	}
	if _, err := os.Stat(filepath.Join("bin", "kustomize")); err == nil {
		return filepath.Abs(filepath.Join("bin", "kustomize"))
	}
	return "", errors.New("no kustomize on PATH nor in ./bin: run make kustomize, or pipe kustomize build DIR | simulate --manifests -")
}
