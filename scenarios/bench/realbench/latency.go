//go:build bench

package realbench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/scenarios/bench/poller"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

// demux keeps one eventlog.Recorder per namespace, all on one clock, fed
// by a single cluster-wide Observer.
type demux struct {
	start  time.Time
	mu     sync.Mutex
	recs   map[string]*eventlog.Recorder
	status map[string][]DeploymentStatus
}

func newDemux(start time.Time) *demux {
	return &demux{start: start, recs: map[string]*eventlog.Recorder{}, status: map[string][]DeploymentStatus{}}
}

// statuses returns the Deployment statuses seen in ns.
func (d *demux) statuses(ns string) []DeploymentStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]DeploymentStatus(nil), d.status[ns]...)
}

func (d *demux) rec(ns string) *eventlog.Recorder {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.recs[ns]
	if r == nil {
		r = eventlog.NewRecorder(d.start, nil)
		d.recs[ns] = r
	}
	return r
}

// Observe implements realcluster.Sink.
func (d *demux) Observe(typ watch.EventType, obj client.Object, at time.Time) {
	d.rec(obj.GetNamespace()).Observe(typ, obj, at)
	if dep, ok := obj.(*appsv1.Deployment); ok && typ != watch.Deleted {
		st := statusOf(dep, d.since(at))
		d.mu.Lock()
		d.status[dep.Namespace] = append(d.status[dep.Namespace], st)
		d.mu.Unlock()
	}
}

func (d *demux) since(t time.Time) float64 { return t.Sub(d.start).Seconds() }

// latencyCase is one upgrade of the latency phase.
type latencyCase struct {
	driver string // DriverOperator, DriverPoller or DriverAlone
	timing Timing
	ns     string
	// twin, for DriverAlone, is the operator case whose image writes it
	// mirrors: its worker image is written when the twin's is, its API
	// image when the twin's is, so both rollouts run alone under the same
	// load as the operator's.
	twin string
}

// runLatency runs the latency phase on env: cfg.Demo upgrades of the demo
// app by the operator and by the poller, and cfg.Fixed upgrades of the
// fixed-timing copy by the operator, the poller and with no ordering at
// all, side by side, starts staggered by cfg.Stagger.
func runLatency(ctx context.Context, env *env, cfg Config) (*LatencyResult, error) {
	app, err := loadDemo()
	if err != nil {
		return nil, err
	}
	var cases []latencyCase
	add := func(driver string, t Timing, tag string) {
		cases = append(cases, latencyCase{driver: driver, timing: t, ns: "lat-" + driver + "-" + tag})
	}
	// Interleaved so that drivers start side by side, not one after another.
	for i := range max(cfg.Demo, cfg.Fixed) {
		if i < cfg.Demo {
			add(DriverOperator, Timing{}, fmt.Sprintf("demo-%02d", i))
			add(DriverPoller, Timing{}, fmt.Sprintf("demo-%02d", i))
		}
		if i < cfg.Fixed {
			add(DriverOperator, cfg.FixedTiming, fmt.Sprintf("fixed-%02d", i))
			add(DriverPoller, cfg.FixedTiming, fmt.Sprintf("fixed-%02d", i))
			add(DriverAlone, cfg.FixedTiming, fmt.Sprintf("fixed-%02d", i))
			cases[len(cases)-1].twin = cases[len(cases)-3].ns
		}
	}

	dm := newDemux(time.Now())
	obs, err := realcluster.Observe(ctx, env.cfg, "", dm)
	if err != nil {
		return nil, err
	}
	defer obs.Stop()

	env.logf("latency: preparing %d namespaces (demo app, %d replicas each side)", len(cases), app.target("").WorkerReplicas)
	if err := parallel(len(cases), 8, func(i int) error {
		c := cases[i]
		nsObj, w, a, _ := app.objects(c.ns, c.timing)
		return realcluster.Apply(ctx, env.client, []client.Object{nsObj, w, a})
	}); err != nil {
		return nil, err
	}
	if err := parallel(len(cases), len(cases), func(i int) error {
		return waitInitialRollout(ctx, dm.rec(cases[i].ns), app.target(cases[i].ns), 3*time.Minute)
	}); err != nil {
		return nil, err
	}
	for _, c := range cases { // one confirming pass by the product's own definition
		if err := realcluster.WaitRolledOut(ctx, env.client, c.ns, time.Minute); err != nil {
			return nil, err
		}
	}

	op, err := startOperator(ctx, env.operatorBin, env.kubeconfig, env.dir, "operator-latency", nil)
	if err != nil {
		return nil, err
	}
	defer op.stop()
	if _, err := op.waitSynced(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	before, err := op.waitQuiet(ctx, time.Second, time.Minute)
	if err != nil {
		return nil, err
	}

	env.logf("latency: %d upgrades, one started every %s", len(cases), cfg.Stagger)
	results := make([]CaseResult, len(cases))
	began := time.Now()
	err = parallel(len(cases), len(cases), func(i int) error {
		select {
		case <-time.After(time.Duration(i)*cfg.Stagger - time.Since(began)):
		case <-ctx.Done():
			return ctx.Err()
		}
		r, err := runCase(ctx, env, app, dm, cases[i])
		results[i] = r
		return err
	})
	after, snapErr := op.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if snapErr != nil {
		return nil, snapErr
	}
	res := summarizeLatency(results, cfg)
	d := after.Sub(before)
	secs := time.Since(began).Seconds()
	res.Operator = OperatorStats{Seconds: secs, Reconciles: d.ReconcileTotal(), ReconcileErrors: d.Reconciles["error"],
		ReconcileMean: d.ReconcileTime.Mean(), ReconcileP99: d.ReconcileTime.Quantile(0.99), Busy: d.ReconcileTime.Sum / secs,
		QueueWaitMean: d.QueueWait.Mean(), HandoffMetricCount: d.Handoff.Count, HandoffMetricMean: d.Handoff.Mean()}
	return res, nil
}

// runCase drives one upgrade and waits until both rollouts have ended (and,
// for the operator, the upgrade is Completed).
func runCase(ctx context.Context, env *env, app *demoApp, dm *demux, c latencyCase) (CaseResult, error) {
	rec := dm.rec(c.ns)
	up := app.target(c.ns)
	r := CaseResult{Namespace: c.ns, Driver: c.driver, Timing: c.timing.String(), Fixed: !c.timing.IsZero(), Twin: c.twin, PollerWorkerDone: -1, PollerAPIDone: -1}
	r.Start = dm.since(time.Now())
	switch c.driver {
	case DriverOperator:
		_, _, _, u := app.objects(c.ns, c.timing)
		if err := env.client.Create(ctx, u); err != nil {
			return r, fmt.Errorf("create applicationupgrade in %s: %w", c.ns, err)
		}
	case DriverPoller:
		w, a := app.pollerTargets()
		pr, err := poller.Run(ctx, poller.Config{Client: env.client, Namespace: c.ns, Worker: w, API: a, Interval: poller.DefaultInterval, Timeout: 5 * time.Minute})
		if err != nil {
			return r, err
		}
		r.PollerWorkerDone, r.PollerAPIDone = dm.since(pr.WorkerDone), dm.since(pr.APIDone)
	case DriverAlone:
		w, a := app.pollerTargets()
		twin, twinUp := dm.rec(c.twin), app.target(c.twin)
		for _, step := range []struct {
			t       poller.Target
			written func(Moments) bool
		}{{w, func(t Moments) bool { return t.WorkerWrite >= 0 }}, {a, func(t Moments) bool { return t.APIWrite >= 0 }}} {
			err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
				return step.written(Measure(twin.Events(), twinUp)), nil
			})
			if err != nil {
				return r, fmt.Errorf("alone %s: twin %s never wrote %s: %w", c.ns, c.twin, step.t.Name, err)
			}
			if err := poller.SetImage(ctx, env.client, c.ns, step.t); err != nil {
				return r, err
			}
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
		r.Moments = Measure(rec.Events(), up)
		if r.Moments.Failed {
			return false, fmt.Errorf("upgrade in %s Failed", c.ns)
		}
		return r.Moments.Done() && (c.driver != DriverOperator || r.Moments.Completed >= 0), nil
	})
	if err != nil {
		return r, fmt.Errorf("%s upgrade in %s: %w (moments %+v)", c.driver, c.ns, err, r.Moments)
	}
	r.WorkerStatusSettled = StatusSettled(dm.statuses(c.ns), rec.Events(), up)
	return r, nil
}

// waitInitialRollout waits until rec shows every pod of both Deployments Ready.
func waitInitialRollout(ctx context.Context, rec *eventlog.Recorder, up Upgrade, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ready := map[string]int{}
		for _, e := range rec.Events() {
			if e.Event == eventlog.PodReady {
				ready[e.Deployment]++
			}
		}
		return ready[up.Worker] >= up.WorkerReplicas && ready[up.API] >= up.APIReplicas, nil
	})
}

// parallel runs f(0..n-1) on at most width goroutines and joins the errors.
func parallel(n, width int, f func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, max(1, width))
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
