package controlplane

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// rootModule is the module path whose go.mod marks the repository root.
const rootModule = "github.com/lunadas/upgrade-operator"

// Binary names, as make controlplane builds them into bin/.
const (
	etcdBin              = "etcd"
	apiserverBin         = "kube-apiserver"
	controllerManagerBin = "kube-controller-manager"
	schedulerBin         = "kube-scheduler"
	kwokBin              = "kwok"
)

var binaries = []string{etcdBin, apiserverBin, controllerManagerBin, schedulerBin, kwokBin}

// Options configure Start. The zero value is usable from anywhere inside
// the repository.
type Options struct {
	// BinDir holds etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler and kwok. Default: <repo root>/bin (make controlplane).
	BinDir string
	// StagesDir holds the kwok Stage YAML files, each passed to kwok with
	// --config. Default: <repo root>/deploy/kwok/stages.
	StagesDir string
	// WorkDir receives certificates, kubeconfigs, etcd data and logs/.
	// Default: a new directory under os.TempDir(), removed by Stop unless
	// logs are kept.
	WorkDir string
	// KeepLogs keeps WorkDir (and so LogDir) after Stop and prints its path;
	// ControlPlane.KeepLogs sets it later, e.g. when a test failed.
	KeepLogs bool
	// NodeName is the name of the kwok Node that pods are scheduled to.
	// Default: "kwok-node-0".
	NodeName string
	// StartTimeout bounds start-up on top of ctx. Default: 2 minutes (the
	// API server alone is ready in ~4 s on 2 idle cores; shared cores and a
	// cold page cache make it slower).
	StartTimeout time.Duration
	// StopTimeout is how long Stop waits for each process after SIGTERM
	// before it sends SIGKILL to the process group. Default: 10 seconds.
	StopTimeout time.Duration
	// Logf prints progress and the kept log directory. Default: to stderr.
	Logf func(format string, args ...any)
	// ExtraArgs are appended to a component's command line, keyed by its
	// binary name ("kube-controller-manager", ...); a repeated flag's last
	// value wins. make bench raises the controller-manager's client rate
	// limit (--kube-api-qps) so thousands of Deployments settle in seconds.
	ExtraArgs map[string][]string
	// RealNode also starts a real node (make node): containerd and a
	// kubelet registered as RealNodeName, tainted so only pods made with
	// RealNodePodSpec run there; kwok then manages only its own Node.
	// Linux and root only; Start returns an error wrapping
	// ErrRealNodeUnavailable when containerd cannot start.
	RealNode bool
	// NodeImages is the image archive imported into the real node's
	// containerd. Default: <repo root>/bin/node-images.tar (make node).
	NodeImages string
}

// withDefaults returns a copy of o with every empty field filled in.
func (o Options) withDefaults() (Options, error) {
	if o.BinDir == "" || o.StagesDir == "" || (o.RealNode && o.NodeImages == "") {
		root, err := RepoRoot()
		if err != nil {
			return o, err
		}
		if o.BinDir == "" {
			o.BinDir = filepath.Join(root, "bin")
		}
		if o.StagesDir == "" {
			o.StagesDir = filepath.Join(root, "deploy", "kwok", "stages")
		}
		if o.RealNode && o.NodeImages == "" {
			o.NodeImages = filepath.Join(root, "bin", "node-images.tar")
		}
	}
	if o.NodeName == "" {
		o.NodeName = "kwok-node-0"
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 10 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	}
	return o, nil
}

// RepoRoot walks up from the working directory to the directory whose
// go.mod declares the module github.com/lunadas/upgrade-operator (the tools
// modules under hack/tools have go.mod files of their own and are skipped).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("controlplane: find repository root: %w", err)
	}
	for {
		if isRootModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("controlplane: no go.mod of module %s above the working directory: run inside the repository or set the binary and stage directories (Options.BinDir and StagesDir; --bin-dir and --stages-dir)", rootModule)
		}
		dir = parent
	}
}

func isRootModule(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == rootModule
		}
	}
	return false
}

// checkBinaries returns one error naming every binary missing from binDir.
func checkBinaries(binDir string) error {
	var errs []error
	for _, name := range binaries {
		path := filepath.Join(binDir, name)
		info, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("controlplane: %s not found: run 'make controlplane'", displayPath(path)))
		case err != nil:
			errs = append(errs, fmt.Errorf("controlplane: %s: %w", path, err))
		case info.IsDir() || info.Mode().Perm()&0o111 == 0:
			errs = append(errs, fmt.Errorf("controlplane: %s is not an executable file: run 'make controlplane'", path))
		}
	}
	return errors.Join(errs...)
}

// displayPath shortens path to bin/<name> when it lies in the repository's
// bin directory, as the make target names it.
func displayPath(path string) string {
	if root, err := RepoRoot(); err == nil {
		if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return path
}

// stageFiles lists the *.yaml files in dir, sorted by name.
func stageFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("controlplane: list kwok stages in %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("controlplane: no kwok stages (*.yaml) in %s: set Options.StagesDir to deploy/kwok/stages", dir)
	}
	return files, nil
}
