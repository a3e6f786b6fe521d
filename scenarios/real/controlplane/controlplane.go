// Package controlplane runs a real Kubernetes control plane on 127.0.0.1 as
// local processes: etcd, kube-apiserver, kube-controller-manager (the real
// Deployment and ReplicaSet controllers), kube-scheduler, and kwok standing
// in for kubelets, driven by the Stages in deploy/kwok/stages. It needs the
// binaries that `make controlplane` builds into bin/ (versions pinned in
// hack/tools/*/go.mod); facts and pitfalls are in
// shared/reference/real-control-plane.md. Unix only.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ControlPlane is a running control plane. Stop it with Stop.
type ControlPlane struct {
	// Kubeconfig is the path of an admin kubeconfig (user "admin" in
	// system:masters; certificates embedded) inside WorkDir.
	Kubeconfig string
	// RESTConfig authenticates as the same admin user.
	RESTConfig *rest.Config
	// BinDir is where the binaries were taken from.
	BinDir string
	// WorkDir holds certificates, kubeconfigs, etcd data and LogDir.
	WorkDir string
	// LogDir holds <component>.log per process: its stdout and stderr,
	// after a first line with the command line.
	LogDir string
	// NodeName is the kwok Node pods are scheduled to.
	NodeName string
	// StartupDuration is how long Start took, from its call until the
	// default ServiceAccount existed.
	StartupDuration time.Duration

	opts      Options
	procs     []*process // in start order: etcd first
	realNode  *realNode  // nil unless Options.RealNode
	mu        sync.Mutex
	keepLogs  bool
	stopped   bool
	stopErr   error
	ownsWork  bool
	doneOnce  sync.Once
	done      chan struct{}
	exitedErr error
}

// Start starts etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok on free 127.0.0.1 ports, creates the kwok Node and
// removes its node.kubernetes.io/not-ready:NoSchedule taint, and returns once
// the API server is ready, the scheduler's informers are synced and the
// ServiceAccount default/default exists (pods can be created). ctx and
// opts.StartTimeout bound start-up only; the processes run until Stop. On
// error everything started is stopped and the logs are kept (their path is
// in the error and printed).
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	began := time.Now()
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := checkBinaries(opts.BinDir); err != nil {
		return nil, err
	}
	if opts.RealNode {
		if err := checkRealNode(opts.BinDir, opts.NodeImages); err != nil {
			return nil, err
		}
	}
	stages, err := stageFiles(opts.StagesDir)
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{BinDir: opts.BinDir, NodeName: opts.NodeName, opts: opts, keepLogs: opts.KeepLogs, done: make(chan struct{})}
	if err := cp.prepareWorkDir(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if err := cp.start(ctx, stages); err != nil {
		cp.KeepLogs()
		if stopErr := cp.Stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, err
	}
	cp.StartupDuration = time.Since(began)
	go cp.watchExits()
	return cp, nil
}

func (cp *ControlPlane) prepareWorkDir() error {
	cp.WorkDir = cp.opts.WorkDir
	if cp.WorkDir == "" {
		dir, err := os.MkdirTemp("", "controlplane-")
		if err != nil {
			return fmt.Errorf("controlplane: create work directory: %w", err)
		}
		cp.WorkDir, cp.ownsWork = dir, true
	}
	cp.LogDir = filepath.Join(cp.WorkDir, "logs")
	if err := os.MkdirAll(cp.LogDir, 0o755); err != nil {
		return fmt.Errorf("controlplane: create log directory: %w", err)
	}
	return nil
}

// start runs the components in dependency order, waiting for each stage of
// readiness before the next.
func (cp *ControlPlane) start(ctx context.Context, stages []string) error {
	k, err := newPKI(filepath.Join(cp.WorkDir, "pki"), net.ParseIP(serviceIP))
	if err != nil {
		return err
	}
	nums, err := freePorts(6)
	if err != nil {
		return err
	}
	p := ports{etcdClient: nums[0], etcdPeer: nums[1], etcdMetrics: nums[2], apiserver: nums[3], scheduler: nums[4], kwok: nums[5]}
	server := p.apiserverURL()
	kubeconfigs := map[string]string{}
	for _, user := range []string{adminUser, controllerManagerUser, schedulerUser, kwokUser} {
		path := filepath.Join(cp.WorkDir, kubeconfigName(user))
		if err := writeKubeconfig(path, server, k.caPEM, k.clients[user]); err != nil {
			return err
		}
		kubeconfigs[user] = path
	}
	cp.Kubeconfig = kubeconfigs[adminUser]
	cp.RESTConfig = restConfig(server, k.caPEM, k.clients[adminUser])
	client, err := kubernetes.NewForConfig(cp.RESTConfig)
	if err != nil {
		return fmt.Errorf("controlplane: client for %s: %w", server, err)
	}

	if err := cp.run(etcdBin, etcdArgs(filepath.Join(cp.WorkDir, "etcd"), p), nil); err != nil {
		return err
	}
	if err := cp.run(apiserverBin, apiserverArgs(cp.WorkDir, k, p), nil); err != nil {
		return err
	}
	if err := cp.waitAPIServer(ctx, client); err != nil {
		return err
	}
	// enabledControllers include root-ca-cert-publisher: a real kubelet
	// mounts the kube-root-ca.crt ConfigMap into every pod with a service
	// account token.
	kcmArgs := controllerManagerArgs(kubeconfigs[controllerManagerUser], k)
	if err := cp.run(controllerManagerBin, kcmArgs, nil); err != nil {
		return err
	}
	if err := cp.run(schedulerBin, schedulerArgs(cp.WorkDir, kubeconfigs[schedulerUser], p), nil); err != nil {
		return err
	}
	if err := cp.runRestarting(kwokBin, kwokArgs(kubeconfigs[kwokUser], stages, p, cp.opts.RealNode), kwokEnv(cp.WorkDir), kwokRestarts); err != nil {
		return err
	}
	if err := cp.readyNode(ctx, client); err != nil {
		return err
	}
	if err := cp.waitScheduler(ctx, p.scheduler); err != nil {
		return err
	}
	if cp.opts.RealNode {
		if err := cp.startRealNode(ctx, client, k, server); err != nil {
			return err
		}
	}
	return cp.waitDefaultServiceAccount(ctx, client)
}

// kwokRestarts is how many times kwok is restarted when it exits on its
// own (see restartPolicy).
const kwokRestarts = 3

func kubeconfigName(user string) string {
	switch user {
	case controllerManagerUser:
		return "kube-controller-manager.kubeconfig"
	case schedulerUser:
		return "kube-scheduler.kubeconfig"
	default:
		return user + ".kubeconfig"
	}
}

// run starts one component and records it for Stop.
func (cp *ControlPlane) run(name string, args, env []string) error {
	_, err := cp.runPath(filepath.Join(cp.BinDir, name), name, args, env...)
	return err
}

// runRestarting is run under a restartPolicy of max restarts (see
// restartPolicy for why kwok needs one).
func (cp *ControlPlane) runRestarting(name string, args, env []string, max int) error {
	_, err := cp.start1(filepath.Join(cp.BinDir, name), name, args, env, &restartPolicy{max: max, logf: cp.opts.Logf})
	return err
}

// runPath starts the executable at path as component name and records it
// for Stop.
func (cp *ControlPlane) runPath(path, name string, args []string, env ...string) (*process, error) {
	return cp.start1(path, name, args, env, nil)
}

func (cp *ControlPlane) start1(path, name string, args, env []string, restart *restartPolicy) (*process, error) {
	args = append(args, cp.opts.ExtraArgs[name]...)
	proc, err := startProcessPath(path, cp.LogDir, name, args, env, restart)
	if err != nil {
		return nil, err
	}
	cp.mu.Lock()
	cp.procs = append(cp.procs, proc)
	cp.mu.Unlock()
	return proc, nil
}

// KeepLogs asks Stop to keep WorkDir (with LogDir) and print its path, e.g.
// `t.Cleanup(func() { if t.Failed() { cp.KeepLogs() }; cp.Stop() })`.
func (cp *ControlPlane) KeepLogs() {
	cp.mu.Lock()
	cp.keepLogs = true
	cp.mu.Unlock()
}

// Done is closed when a component exits without Stop having been called;
// Err then says which and why.
func (cp *ControlPlane) Done() <-chan struct{} { return cp.done }

// Err returns why Done was closed, or nil.
func (cp *ControlPlane) Err() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.exitedErr
}

// watchExits closes done when any component exits on its own.
func (cp *ControlPlane) watchExits() {
	cp.mu.Lock()
	procs := append([]*process(nil), cp.procs...)
	cp.mu.Unlock()
	cases := make(chan *process, len(procs))
	for _, p := range procs {
		go func() { <-p.done; cases <- p }()
	}
	p := <-cases
	if err := p.exited(); err != nil {
		cp.mu.Lock()
		cp.exitedErr = err
		cp.mu.Unlock()
		cp.doneOnce.Do(func() { close(cp.done) })
	}
}

// Stop stops the components in reverse start order (kwok, scheduler,
// controller-manager, API server, then etcd: stopping etcd first makes the
// API server hang ~25 s), each by SIGTERM to its process group and SIGKILL
// after Options.StopTimeout. It then removes WorkDir unless logs are kept,
// in which case it prints LogDir. Safe to call more than once.
func (cp *ControlPlane) Stop() error {
	cp.mu.Lock()
	if cp.stopped {
		cp.mu.Unlock()
		return cp.stopErr
	}
	cp.stopped = true
	procs := cp.procs
	keep := cp.keepLogs
	cp.mu.Unlock()

	var errs []error
	if cp.realNode != nil {
		errs = append(errs, cp.realNode.stop(func(p *process) error { return p.stop(cp.opts.StopTimeout) }))
	}
	for i := len(procs) - 1; i >= 0; i-- {
		if err := procs[i].stop(cp.opts.StopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case keep:
		if err := os.RemoveAll(filepath.Join(cp.WorkDir, "etcd")); err != nil {
			errs = append(errs, fmt.Errorf("controlplane: remove etcd data: %w", err))
		}
		cp.opts.Logf("controlplane: logs kept in %s", cp.LogDir)
	case cp.ownsWork:
		if err := os.RemoveAll(cp.WorkDir); err != nil {
			errs = append(errs, fmt.Errorf("controlplane: remove work directory: %w", err))
		}
	}
	err := errors.Join(errs...)
	cp.mu.Lock()
	cp.stopErr = err
	cp.mu.Unlock()
	return err
}
