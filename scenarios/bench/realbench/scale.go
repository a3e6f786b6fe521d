//go:build bench

package realbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/bench/opstats"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

const fillerLabel = "bench.lunadas.dev/filler"

// runScale grows the cluster through cfg.Sizes unrelated Deployments and,
// at each size, runs one upgrade per scope with a fresh operator process,
// churning the fillers meanwhile.
func runScale(ctx context.Context, e *env, cfg Config) (*ScaleResult, error) {
	app, err := loadDemo()
	if err != nil {
		return nil, err
	}
	res := &ScaleResult{Timing: cfg.ScaleTiming, FillerSeconds: map[int]float64{}}
	fillerNS, err := fillerNamespaces(ctx, e, cfg)
	if err != nil {
		return nil, err
	}
	sizes := slices.Sorted(slices.Values(cfg.Sizes))
	have := 0
	var gone []string // the previous row's namespaces, being deleted
	for _, size := range sizes {
		began := time.Now()
		if size > have {
			if err := createFillers(ctx, e, fillerNS, have, size); err != nil {
				return nil, err
			}
			have = size
		}
		res.FillerSeconds[size] = time.Since(began).Seconds()
		for _, scope := range cfg.Scopes {
			e.logf("scale: %d unrelated Deployments, scope %s", size, scope)
			row, names, err := scaleRun(ctx, e, cfg, app, size, scope, fillerNS, gone)
			if err != nil {
				return res, err
			}
			res.Rows = append(res.Rows, row)
			gone = names
		}
	}
	return res, nil
}

// fillerNamespaces creates the cfg.FillerNamespaces namespaces the
// unrelated Deployments are spread over and returns their names.
func fillerNamespaces(ctx context.Context, e *env, cfg Config) ([]string, error) {
	fillerNS := make([]string, cfg.FillerNamespaces)
	for i := range fillerNS {
		fillerNS[i] = fmt.Sprintf("fill-%02d", i)
		if err := realcluster.Apply(ctx, e.client, []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fillerNS[i]}}}); err != nil {
			return nil, err
		}
	}
	return fillerNS, nil
}

// createFillers creates unrelated Deployments have..size-1 and waits
// until the controller-manager has settled them.
func createFillers(ctx context.Context, e *env, fillerNS []string, have, size int) error {
	e.logf("creating unrelated Deployments %d..%d", have, size-1)
	if err := parallel(size-have, 32, func(i int) error {
		i += have
		return client.IgnoreAlreadyExists(e.client.Create(ctx, filler(fillerNS[i%len(fillerNS)], i)))
	}); err != nil {
		return err
	}
	return waitFillersSettled(ctx, e.client, size, 10*time.Minute)
}

// runLoad is the load phase (issue 21): cfg.LoadUpgrades upgrades created
// at once, cluster-wide, among cfg.LoadFillers unrelated Deployments
// updated at cfg.ChurnRate per second — the kube-controller-manager busy,
// where the Deployment's status lags the pod list. One row, measured as a
// scale row.
func runLoad(ctx context.Context, e *env, cfg Config) (*ScaleRow, error) {
	app, err := loadDemo()
	if err != nil {
		return nil, err
	}
	fillerNS, err := fillerNamespaces(ctx, e, cfg)
	if err != nil {
		return nil, err
	}
	if err := createFillers(ctx, e, fillerNS, 0, cfg.LoadFillers); err != nil {
		return nil, err
	}
	c := cfg
	c.ScaleUpgrades = cfg.LoadUpgrades
	e.logf("load: %d upgrades at once among %d unrelated Deployments", c.ScaleUpgrades, cfg.LoadFillers)
	row, _, err := scaleRun(ctx, e, c, app, cfg.LoadFillers, "all", fillerNS, nil)
	if err != nil {
		return nil, err
	}
	return &row, nil
}

// scaleRun runs one row: cfg.ScaleUpgrades upgrades side by side, each in
// a namespace of its own. previous, when set, are the namespaces of the
// previous row, being deleted: the operator starts only once they are
// gone, so that their upgrades and pods are in no cache and cause no reconcile.
func scaleRun(ctx context.Context, e *env, cfg Config, app *demoApp, size int, scope string, fillerNS, previous []string) (ScaleRow, []string, error) {
	row := ScaleRow{Fillers: size, Scope: scope, ChurnRate: cfg.ChurnRate, Upgrades: cfg.ScaleUpgrades}
	dm := newDemux(time.Now())
	type one struct {
		ns    string
		nsObj *corev1.Namespace
		up    Upgrade
		u     client.Object
		obs   *realcluster.Observer
	}
	runs := make([]*one, cfg.ScaleUpgrades)
	var names []string
	defer func() {
		for _, r := range runs {
			if r != nil && r.obs != nil {
				r.obs.Stop()
			}
		}
	}()
	for i := range runs {
		ns := fmt.Sprintf("scale-%d-%s-%d", size, scope, i)
		nsObj, w, a, u := app.objects(ns, cfg.ScaleTiming)
		obs, err := realcluster.Observe(ctx, e.cfg, ns, dm)
		if err != nil {
			return row, names, err
		}
		runs[i] = &one{ns: ns, nsObj: nsObj, up: app.target(ns), u: u, obs: obs}
		names = append(names, ns)
		if err := realcluster.Apply(ctx, e.client, []client.Object{nsObj, w, a}); err != nil {
			return row, names, err
		}
	}
	for _, r := range runs {
		if err := waitInitialRollout(ctx, dm.rec(r.ns), r.up, 2*time.Minute); err != nil {
			return row, names, err
		}
		if err := realcluster.WaitRolledOut(ctx, e.client, r.ns, time.Minute); err != nil {
			return row, names, err
		}
	}
	var watch []string
	switch scope {
	case "all":
		row.WatchedFillers = size
	case "listed":
		watch, row.WatchedFillers = append(slices.Clone(names), fillerNS...), size
	case "own":
		watch = slices.Clone(names)
	default:
		return row, names, fmt.Errorf("unknown scope %q: want all, listed or own", scope)
	}
	row.WatchNamespaces = len(watch)
	for _, ns := range previous {
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(e.client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})), nil
		})
		if err != nil {
			return row, names, fmt.Errorf("namespace %s not gone: %w", ns, err)
		}
	}
	op, err := startOperator(ctx, e.operatorBin, e.kubeconfig, e.dir, fmt.Sprintf("operator-scale-%d-%s", size, scope), watch)
	if err != nil {
		return row, names, err
	}
	defer op.stop()
	synced, err := op.waitSynced(ctx, 3*time.Minute)
	if err != nil {
		return row, names, err
	}
	s0, err := op.waitQuiet(ctx, time.Second, time.Minute)
	if err != nil {
		return row, names, err
	}
	ch := startChurn(ctx, e.client, fillerNS, size, cfg.ChurnRate)
	t0 := dm.since(time.Now())
	for _, r := range runs {
		if err := e.client.Create(ctx, r.u); err != nil {
			ch.stop()
			return row, names, err
		}
	}
	var handoffs, totals []float64
	moments := map[string]Moments{}
	for _, r := range runs {
		var tl Moments
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
			tl = Measure(dm.rec(r.ns).Events(), r.up)
			if tl.Failed {
				return false, fmt.Errorf("upgrade in %s Failed", r.ns)
			}
			return tl.Done() && tl.Completed >= 0, nil
		})
		if err != nil {
			ch.stop()
			return row, names, fmt.Errorf("upgrade in %s: %w (moments %+v)", r.ns, err, tl)
		}
		handoffs = append(handoffs, tl.Handoff())
		moments[r.ns] = tl
		totals = append(totals, tl.APIGone-t0)
	}
	// Trailing reconciles (the Completed status patches' own events) land in the window.
	time.Sleep(time.Second)
	s1, err := op.snapshot(ctx)
	row.ChurnUpdates = ch.stop()
	if err != nil {
		return row, names, err
	}
	d := s1.Sub(s0)
	k := float64(len(runs))
	row.Reconciles = float64(d.ReconcileTotal()) / k
	row.ReconcileErrors = d.Reconciles["error"]
	row.Requests = float64(opstats.Total(d.Requests, opstats.IsWatch)) / k
	var per []float64
	for _, r := range runs {
		per = append(per, float64(d.NamespaceRequests[r.ns]))
	}
	row.PerUpgradeRequests = Summarize(per)
	row.Watches = opstats.Total(d.Requests, nil) - opstats.Total(d.Requests, opstats.IsWatch)
	row.RequestsByKey = d.Requests
	row.StartupRequests, row.StartupByKey = opstats.Total(s0.Requests, nil), s0.Requests
	row.SyncSeconds = synced.SyncSeconds
	row.CPUSeconds, row.StartupCPUSeconds = d.CPUSeconds, s0.CPUSeconds
	row.HeapBytes, row.RSS, row.PeakRSS = s1.HeapAlloc, s1.RSS, s1.PeakRSS
	row.Handoff, row.Total = Summarize(handoffs), Summarize(totals)
	if err := op.stop(); err != nil {
		e.logf("scale: operator %d/%s: %v", size, scope, err)
	}
	if parts, err := handoffParts(dm, op.Log(), moments); err != nil {
		e.logf("scale: handoff parts of %d/%s: %v", size, scope, err)
	} else {
		row.HandoffParts = &parts
	}
	// The namespaces go (the next row waits for them): their upgrades and
	// pods would otherwise be in the next cluster-wide operator's caches.
	for _, r := range runs {
		if err := e.client.Delete(ctx, r.nsObj); err != nil {
			return row, names, err
		}
	}
	return row, names, nil
}

// waitFillersSettled waits until the controller-manager has made a
// ReplicaSet for each of the size fillers and observed every filler.
func waitFillersSettled(ctx context.Context, c client.Client, size int, timeout time.Duration) error {
	sel := client.MatchingLabels{fillerLabel: "true"}
	last := ""
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		rss := &metav1.PartialObjectMetadataList{}
		rss.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("ReplicaSetList"))
		if err := c.List(ctx, rss, sel); err != nil {
			return false, nil
		}
		if len(rss.Items) < size {
			last = fmt.Sprintf("%d/%d ReplicaSets", len(rss.Items), size)
			return false, nil
		}
		var ds appsv1.DeploymentList
		if err := c.List(ctx, &ds, sel); err != nil {
			return false, nil
		}
		pending := 0
		for _, d := range ds.Items {
			if d.Status.ObservedGeneration < d.Generation {
				pending++
			}
		}
		last = fmt.Sprintf("%d/%d Deployments unobserved", pending, len(ds.Items))
		return len(ds.Items) >= size && pending == 0, nil
	})
	if err != nil {
		return fmt.Errorf("unrelated Deployments not settled within %s (%s): %w", timeout, last, err)
	}
	return nil
}

// churn updates an annotation of random fillers at a steady rate (the
// Deployment controller copies it to the filler's ReplicaSet: two watch
// events per update).
type churn struct {
	stopc chan struct{}
	done  chan struct{}
	n     int
	once  sync.Once
}

func startChurn(ctx context.Context, c client.Client, fillerNS []string, size int, rate float64) *churn {
	ch := &churn{stopc: make(chan struct{}), done: make(chan struct{})}
	if size == 0 || rate <= 0 {
		close(ch.done)
		return ch
	}
	go func() {
		defer close(ch.done)
		rng := rand.New(rand.NewPCG(uint64(size), 42))
		t := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-ch.stopc:
				return
			case <-ctx.Done():
				return
			}
			i := rng.IntN(size)
			d := filler(fillerNS[i%len(fillerNS)], i)
			patch := fmt.Appendf(nil, `{"metadata":{"annotations":{"bench.lunadas.dev/churn":"%d"}}}`, ch.n)
			if err := c.Patch(ctx, d, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
				if strings.Contains(err.Error(), "context canceled") {
					return
				}
				continue
			}
			ch.n++
		}
	}()
	return ch
}

// stop ends the churn and returns the number of updates made.
func (ch *churn) stop() int {
	ch.once.Do(func() { close(ch.stopc) })
	<-ch.done
	return ch.n
}

// handoffParts splits the row's handoffs with the send times in the
// operator's log (read once the process has exited: every line written).
func handoffParts(dm *demux, logPath string, moments map[string]Moments) (HandoffParts, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return HandoffParts{}, err
	}
	defer f.Close()
	sends, err := ReadOperatorSends(f, upgradesv1alpha1.APIComponent)
	if err != nil {
		return HandoffParts{}, err
	}
	return SplitHandoffs(dm.start, moments, sends), nil
}
