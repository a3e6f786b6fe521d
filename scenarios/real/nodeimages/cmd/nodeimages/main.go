// Command nodeimages builds the real node's images (package
// scenarios/real/nodeimages) into one Docker-format archive, by default
// bin/node-images.tar, which the local control plane's --real-node imports
// into its containerd. `make node` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/nodeimages"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	out := flag.String("o", "", "archive to write (default <repo root>/bin/node-images.tar)")
	goBin := flag.String("go", "go", "the go command")
	flag.Parse()
	if flag.NArg() != 0 {
		return fmt.Errorf("nodeimages: unexpected arguments %q: the only flags are -o and -go", flag.Args())
	}
	root, err := controlplane.RepoRoot()
	if err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join(root, "bin", "node-images.tar")
	}
	binDir := filepath.Join(filepath.Dir(*out), "node-images-bin")
	if err := nodeimages.BuildBinaries(context.Background(), *goBin, root, binDir); err != nil {
		return err
	}
	imgs := nodeimages.Images()
	if err := nodeimages.WriteArchive(*out, binDir, imgs); err != nil {
		return err
	}
	fmt.Printf("nodeimages: %d images in %s\n", len(imgs), *out)
	return nil
}
