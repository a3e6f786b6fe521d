package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lunadas/upgrade-operator/deploy"
	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/real/controlplane"
	"github.com/lunadas/upgrade-operator/scenarios/real/operatorproc"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

// PollInterval is how often Eventually and Consistently look at a real
// cluster.
const PollInterval = 50 * time.Millisecond

// RealSuite is a real API server shared by the scenarios of a suite: the
// local control plane (kube-apiserver, etcd, kube-controller-manager,
// kube-scheduler, kwok), started once, with the CRDs installed.
type RealSuite struct {
	// ControlPlane is nil when the suite runs against RESTConfig given by
	// the caller (a kubeconfig).
	ControlPlane *controlplane.ControlPlane
	RESTConfig   *rest.Config
	// Kubeconfig is the path of RESTConfig's kubeconfig: the out-of-process
	// operator's (Operator).
	Kubeconfig string
	// Operator is the operator binary (BuildOperator) each scenario runs out
	// of process, one process per scenario; empty runs the manager
	// in-process, its calls recorded and open to faults and mutants.
	Operator string
	client   client.Client
}

// StartRealSuite starts the local control plane from ./bin and installs the
// CRDs; realNode adds the real node (controlplane.Options.RealNode, make
// node). logf prints progress.
func StartRealSuite(ctx context.Context, logf func(string, ...any), realNode bool) (*RealSuite, error) {
	cp, err := controlplane.Start(ctx, controlplane.Options{Logf: logf, RealNode: realNode})
	if err != nil {
		return nil, err
	}
	s, err := NewRealSuite(ctx, cp.RESTConfig)
	if err != nil {
		cp.KeepLogs()
		return nil, errors.Join(err, cp.Stop())
	}
	s.ControlPlane, s.Kubeconfig = cp, cp.Kubeconfig
	return s, nil
}

// NewRealSuite uses the cluster at cfg (any kubeconfig) and installs the CRDs.
func NewRealSuite(ctx context.Context, cfg *rest.Config) (*RealSuite, error) {
	c, err := client.New(cfg, client.Options{Scheme: realcluster.Scheme()})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	if err := realcluster.InstallCRDs(ctx, c, deploy.CRDs, "crd/bases", time.Minute); err != nil {
		return nil, err
	}
	return &RealSuite{RESTConfig: cfg, client: c}, nil
}

// Stop stops the control plane, keeping its logs when keepLogs.
func (s *RealSuite) Stop(keepLogs bool) error {
	if s.ControlPlane == nil {
		return nil
	}
	if keepLogs {
		s.ControlPlane.KeepLogs()
	}
	return s.ControlPlane.Stop()
}

// Real runs a scenario on a real API server, in a namespace of its own,
// with the operator scoped to it: the manager in-process, or the operator
// binary as a process of its own (RealSuite.Operator), which can be
// SIGKILLed (KillOperator). Either way the event log is recorded from
// watches; only the in-process manager's calls are recorded too (the
// process's writes are read from the event log, judge.LogWrites).
type Real struct {
	suite  *RealSuite
	opts   Options
	ns     string
	start  time.Time
	rec    *judge.Recorder
	faults *faults.Boundary
	obs    *realcluster.Observer
	// actors are the catalog's cluster actors on real timers (Inject);
	// Close cancels their calls and stops their timers
	actors     *faults.LiveActors
	actorsRT   *realRuntime
	stopActors context.CancelFunc

	mu    sync.Mutex
	mgr   *manager.Running
	proc  *operatorproc.Process
	procs int       // processes started
	logs  string    // the processes' logs
	el    *election // two processes under leader election (AddStandbyReplica)
}

var _ Cluster = (*Real)(nil)

// NewReal creates the scenario's namespace, starts recording its objects
// and starts the operator.
func NewReal(ctx context.Context, suite *RealSuite, opts Options) (*Real, error) {
	r := &Real{suite: suite, opts: opts, ns: namespaceFor(opts.Scenario, time.Now().UnixNano()), start: time.Now()}
	r.faults = faults.NewBoundary(opts.Seed, r.Elapsed, nil)
	r.actorsRT = newRealRuntime(suite.RESTConfig, r.ns)
	actx, cancel := context.WithCancel(context.Background())
	r.stopActors = cancel
	if opts.Nodes > 1 {
		if suite.ControlPlane == nil {
			return nil, fmt.Errorf("scenario %q needs %d nodes: the real backend adds nodes only to the local control plane, not to a cluster given by kubeconfig", opts.Scenario, opts.Nodes)
		}
		if err := suite.ControlPlane.AddNodes(ctx, controlplane.NodeNames(opts.Nodes)[1:]...); err != nil {
			return nil, err
		}
	}
	r.rec = judge.NewRecorder(r.start, time.Now)
	r.actors = faults.NewLiveActors(actx, r.actorsRT, r.ns, r.faults, r.Elapsed, r.rec.History)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}
	if err := suite.client.Create(ctx, ns); err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", r.ns, err)
	}
	obs, err := realcluster.Observe(ctx, suite.RESTConfig, r.ns, r.rec)
	if err != nil {
		return nil, err
	}
	r.obs = obs
	if err := r.startOperator(ctx); err != nil {
		obs.Stop()
		return nil, err
	}
	return r, nil
}

// startOperator runs a new manager (a new operator process, cold cache)
// and returns once its caches are synced.
func (r *Real) startOperator(ctx context.Context) error {
	if r.suite.Operator != "" {
		return r.startProcess(ctx, true)
	}
	customize, wrap := instrument(r.opts.Policy, r.rec, r.faults, 0)
	run, err := manager.Start(context.Background(), r.suite.RESTConfig, manager.Options{
		WatchNamespaces: []string{r.ns}, MetricsAddr: "0", ProbeAddr: "0", SkipNameValidation: true,
		Reconciler: func(rc *controller.ApplicationUpgradeReconciler) reconcile.Reconciler {
			customize(rc)
			return wrap(rc)
		},
	})
	if err != nil {
		return err
	}
	syncCtx, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if err := run.WaitForCacheSync(syncCtx); err != nil {
		// Bounded: controller-runtime v0.25's manager cannot stop while its
		// caches have not synced (runnableGroup.Start spins on a cancelled
		// context; controller-runtime PR #3440).
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return fmt.Errorf("operator caches for namespace %s not synced within a minute: %w", r.ns, errors.Join(err, run.Stop(stopCtx)))
	}
	r.mu.Lock()
	r.mgr = run
	r.mu.Unlock()
	return nil
}

// stopOperator stops the running manager and waits for it to exit.
func (r *Real) stopOperator() error {
	r.mu.Lock()
	m, p, el := r.mgr, r.proc, r.el
	r.mgr, r.proc, r.el = nil, nil, nil
	r.mu.Unlock()
	if el != nil {
		return el.close()
	}
	if p != nil {
		return p.Stop(stopGrace)
	}
	if m == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return m.Stop(ctx)
}

// operatorExited returns the error of a manager that stopped on its own.
func (r *Real) operatorExited() error {
	r.mu.Lock()
	m, p, el := r.mgr, r.proc, r.el
	r.mu.Unlock()
	if el != nil {
		return el.err()
	}
	if p != nil {
		return p.Exited()
	}
	if m == nil {
		return nil
	}
	select {
	case <-m.Done():
		return fmt.Errorf("the operator stopped: %v", m.Err())
	default:
		return nil
	}
}

// Backend implements Cluster.
func (r *Real) Backend() string { return BackendReal }

// Namespace implements Cluster.
func (r *Real) Namespace() string { return r.ns }

// Client implements Cluster.
func (r *Real) Client() client.Client { return r.suite.client }

// Eventually implements Cluster by polling every PollInterval.
func (r *Real) Eventually(ctx context.Context, what string, timeout time.Duration, cond Condition) error {
	err := wait.PollUntilContextTimeout(ctx, PollInterval, timeout, true, func(ctx context.Context) (bool, error) {
		if err := r.operatorExited(); err != nil {
			return false, err
		}
		return cond(ctx)
	})
	if err != nil {
		return fmt.Errorf("%s: not within %s: %w", what, timeout, err)
	}
	return nil
}

// Consistently implements Cluster by polling every PollInterval for d.
func (r *Real) Consistently(ctx context.Context, what string, d time.Duration, cond Condition) error {
	deadline := time.Now().Add(d)
	for {
		if err := r.operatorExited(); err != nil {
			return err
		}
		ok, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if !ok {
			return fmt.Errorf("%s: broken after %s", what, time.Since(deadline.Add(-d)).Round(time.Millisecond))
		}
		if !time.Now().Before(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(PollInterval):
		}
	}
}

// RestartOperator implements Cluster: the manager is stopped and a new
// one started with a cold cache.
func (r *Real) RestartOperator(ctx context.Context) error {
	if r.electing() {
		return fmt.Errorf("restart the operator: two replicas run under leader election; a restart of one is not modelled: %w", ErrUnsupported)
	}
	if err := r.stopOperator(); err != nil {
		return fmt.Errorf("stop the operator: %w", err)
	}
	return r.startOperator(ctx)
}

// HistorySync bounds how long History waits for the watches to catch up.
const HistorySync = 30 * time.Second

// History implements Cluster. The watches that feed the recorder lag the
// API server a little, so it first waits until the recorder's view of the
// namespace's Deployments, pods and upgrades equals a fresh list — every
// change up to now is then recorded (a step that just saw "Completed"
// through a GET also finds it in the history).
func (r *Real) History() judge.History {
	ctx, cancel := context.WithTimeout(context.Background(), HistorySync)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, err := r.caughtUp(ctx)
		last = err
		return ok, nil
	})
	h := r.rec.History()
	if err != nil {
		h.Incomplete = fmt.Sprintf("the watches of namespace %s did not catch up with the API server within %s (last error: %v)", r.ns, HistorySync, last)
	}
	if r.OutOfProcess() {
		var lerr error
		if h.Ops, lerr = r.logWrites(h); lerr != nil && h.Incomplete == "" {
			h.Incomplete = lerr.Error()
		}
	}
	return h
}

// logWrites are the out-of-process operator's template writes and status
// claims, read from the event log (judge.LogWrites, judge.LogClaims)
// against the upgrades as they are now: the
// calls of a process are not recorded, so the steps that count the
// operator's writes and the judge see these.
func (r *Real) logWrites(h judge.History) ([]judge.Op, error) {
	ctx, cancel := context.WithTimeout(context.Background(), HistorySync)
	defer cancel()
	var ups upgradesv1beta1.ApplicationUpgradeList
	if err := r.suite.client.List(ctx, &ups, client.InNamespace(r.ns)); err != nil {
		return nil, fmt.Errorf("list the upgrades of namespace %s to read the operator's writes from the event log: %w", r.ns, err)
	}
	specs := judge.SpecsOf(ups.Items)
	// the status claims too (judge.LogClaims): what its phases said, read
	// from the log, is judged like a recorded status write
	return append(judge.LogWrites(h, specs), judge.LogClaims(h, specs)...), nil
}

// caughtUp compares the recorder's live objects with a fresh list.
func (r *Real) caughtUp(ctx context.Context) (bool, error) {
	want := map[string]string{}
	// the kinds realcluster.Observe watches
	lists := []client.ObjectList{&appsv1.DeploymentList{}, &appsv1.StatefulSetList{}, &appsv1.DaemonSetList{},
		&appsv1.ControllerRevisionList{}, &corev1.PodList{}, &upgradesv1alpha1.ApplicationUpgradeList{}}
	for _, l := range lists {
		if err := r.suite.client.List(ctx, l, client.InNamespace(r.ns)); err != nil {
			return false, err
		}
		err := meta.EachListItem(l, func(o runtime.Object) error {
			obj := o.(client.Object)
			want[judge.LiveKey(fmt.Sprintf("%T", obj), obj.GetNamespace(), obj.GetName())] = obj.GetResourceVersion()
			return nil
		})
		if err != nil {
			return false, err
		}
	}
	return maps.Equal(want, r.rec.Live()), nil
}

// Elapsed implements Cluster.
func (r *Real) Elapsed() time.Duration { return time.Since(r.start) }

// Close implements Cluster: the operator and the recording stop and the
// namespace is deleted (without waiting for it to go).
func (r *Real) Close(ctx context.Context) error {
	r.stopActors()
	r.actorsRT.stop()
	err := r.stopOperator()
	r.obs.Stop()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}
	return errors.Join(err, client.IgnoreNotFound(r.suite.client.Delete(ctx, ns)))
}
