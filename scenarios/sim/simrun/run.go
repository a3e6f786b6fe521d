// Package simrun runs ApplicationUpgrades in the simulator: it wires the
// operator's real reconciler to the simulated API server and controllers,
// records the event log, and judges the run with the one judge
// (judge.Judge; the judge's per-edge reports feed the transcript).
package simrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/operator/rollout"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/render/console"
	"github.com/lunadas/upgrade-operator/simulator"
)

// DefaultLimit is the virtual time a run may take before it is declared stuck.
const DefaultLimit = 2 * time.Hour

// Config describes one simulated run.
type Config struct {
	// Objects are created in order before the run starts (namespaces,
	// Deployments, ApplicationUpgrades ...).
	Objects []client.Object
	// Seed drives every random choice of the simulator.
	Seed int64
	// Limit is the virtual time limit; 0 means DefaultLimit.
	Limit time.Duration
	// EventLog, when set, receives the JSON Lines event log as it is recorded.
	EventLog io.Writer
	// Transcript, when set, receives the human-readable transcript.
	Transcript io.Writer
	// Reconciler customises the reconciler under test (mutation tests); nil
	// runs the product's.
	Reconciler func(r *controller.ApplicationUpgradeReconciler)
	// Wrap wraps the reconciler registered with the simulator (a recorder,
	// a mutant transition policy); nil registers it as is.
	Wrap func(reconcile.Reconciler) reconcile.Reconciler
	// Kube configures the Kubernetes models (watch delays, feature gates).
	Kube simulator.KubeOptions
	// Observe, when set, is called with every committed change after the
	// event log and transcript (it must not write; see simulator.Subscribe).
	Observe func(simulator.WatchEvent)
	// RecordCalls records the operator's API calls and the detailed facts
	// (judge.Recorder, as the features do) and has the judge read them,
	// so its phase claims ("Completed while not rolled") and its
	// duplicate writes are judged too; without it the judge reads the
	// event log alone. Costs about half again the CPU of a run (a second
	// recorder, a record per call, a longer porcupine history); every
	// runner of cmd/simulate sets it (single runs, and --seeds and
	// --crash-sweep through faults.Run).
	RecordCalls bool
	// Faults, when set, injects faults into the run (scenarios/faults).
	Faults Injector
}

// Injector injects faults into a run; scenarios/faults implements it.
type Injector interface {
	// Setup runs before the operator starts, before Config.Reconciler: it
	// may replace the operator's client (a lagging cache, a named replica)
	// and install interceptors.
	Setup(ctx context.Context, sim *simulator.Sim, r *controller.ApplicationUpgradeReconciler) error
	// Start runs once the upgrades are created, with the operator's
	// controller; faults are timed from here.
	Start(op *simulator.Controller)
	// Done reports whether the run may end although not every upgrade is
	// terminal (the upgrade was deleted and the operator had time to settle).
	Done() bool
}

// Result is the outcome of a run; Elapsed is virtual time.
type Result = console.Summary

// Run simulates until every ApplicationUpgrade is Completed or Failed, or
// the virtual limit passes (an error naming the limit). Errors creating the
// objects name the object.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	limit := cfg.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	env, err := NewEnv(ctx, cfg)
	if err != nil {
		return nil, err
	}
	app, upgrades := splitUpgrades(cfg.Objects)
	if err := env.Create(ctx, app); err != nil {
		return nil, err
	}
	// The application is rolled out before the upgrade is applied, as a user would do.
	var check rolloutCheck
	lister := env.Sim.SharedLister("client")
	if _, err := env.Sim.Run(ctx, env.whenChanged(&env.changedApp, func() bool { return check.appRolledOut(ctx, lister) }), limit); err != nil {
		if lim := (*simulator.LimitError)(nil); errors.As(err, &lim) {
			return nil, fmt.Errorf("the application's Deployments did not roll out within %s of virtual time, before the upgrade: raise --limit", limit)
		}
		return nil, fmt.Errorf("the application never rolled out before the upgrade: %w", err)
	}
	if err := env.Create(ctx, upgrades); err != nil {
		return nil, err
	}
	if cfg.Faults != nil {
		cfg.Faults.Start(env.Operator)
	}
	terminal := env.whenChanged(&env.changedUpgrades, func() bool { return allTerminal(ctx, env.Sim.SharedLister("client")) })
	done := func() bool { return terminal() || (cfg.Faults != nil && cfg.Faults.Done()) }
	_, runErr := env.Sim.Run(ctx, done, limit)
	res, err := env.Summary(ctx)
	if err != nil {
		return res, err
	}
	if lim := (*simulator.LimitError)(nil); errors.As(runErr, &lim) {
		if nf := notFinished(res, lim); nf != nil {
			return res, nf
		}
	}
	return res, runErr
}

// NotFinishedError is Run's error when the virtual time limit passed
// before every upgrade was Completed or Failed.
type NotFinishedError struct {
	// Unfinished are the upgrades not terminal, by namespace/name, each
	// with where it got to ("phase P, ...").
	Unfinished []Unfinished
	// Limit is the simulator's error.
	Limit *simulator.LimitError
}

// Unfinished is an upgrade a NotFinishedError names.
type Unfinished struct{ Key, Where string }

func (e *NotFinishedError) Error() string {
	if len(e.Unfinished) == 1 {
		u := e.Unfinished[0]
		return fmt.Sprintf("upgrade %s not finished after %s of virtual time (%s): raise --limit", u.Key, e.Limit.Limit, u.Where)
	}
	names := make([]string, len(e.Unfinished))
	for i, u := range e.Unfinished {
		names[i] = fmt.Sprintf("%s (%s)", u.Key, u.Where)
	}
	return fmt.Sprintf("upgrades %s not finished after %s of virtual time: raise --limit", strings.Join(names, ", "), e.Limit.Limit)
}

func (e *NotFinishedError) Unwrap() error { return e.Limit }

// notFinished is the NotFinishedError of res's upgrades that are not
// terminal, nil when every one is (faults.Injector.Done ended the run).
func notFinished(res *Result, lim *simulator.LimitError) error {
	var out []Unfinished
	for i := range res.Upgrades {
		u := &res.Upgrades[i]
		terminal, phase, extra := u.Status.Phase.Terminal(), string(u.Status.Phase), ""
		if g, ok := res.Graphs[key(u)]; ok {
			terminal, phase = g.Status.Phase.Terminal(), string(g.Status.Phase)
			if g.Status.RolledOut != "" {
				extra = ", " + g.Status.RolledOut + " components rolled out"
			}
		}
		if terminal {
			continue
		}
		if phase == "" {
			phase = "not set yet"
		}
		out = append(out, Unfinished{Key: key(u), Where: "phase " + phase + extra})
	}
	if len(out) == 0 {
		return nil
	}
	return &NotFinishedError{Unfinished: out, Limit: lim}
}

// judgeRun fills res's Upgrades (v1alpha1, sorted by namespace/name),
// Reports and Judged (the one judge, judge.Judge, over the event log and
// every upgrade's graph) from the ApplicationUpgrades and res.Events. An upgrade created
// at v1beta1 (graphs) or whose graph v1alpha1 cannot say is a graph: its
// v1beta1 view goes to Graphs, judge.GraphOrdering of its edges to Edges
// and their judge.Combine to Reports. Any other is checked on its
// v1alpha1 worker/API pair.
func judgeRun(ctx context.Context, c client.Reader, graphs map[string]bool, created []upgradesv1beta1.ApplicationUpgrade, calls *judge.Recorder, res *Result) error {
	var list upgradesv1alpha1.ApplicationUpgradeList
	if err := c.List(ctx, &list); err != nil {
		return fmt.Errorf("list applicationupgrades: %w", err)
	}
	var beta upgradesv1beta1.ApplicationUpgradeList
	if err := c.List(ctx, &beta); err != nil {
		return fmt.Errorf("list applicationupgrades at v1beta1: %w", err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return key(&list.Items[i]) < key(&list.Items[j]) })
	res.Upgrades, res.Reports = list.Items, map[string]judge.Report{}
	for i := range beta.Items {
		u := &beta.Items[i]
		if !graphs[key(u)] && eventlog.AlphaShaped(u.Spec) {
			continue
		}
		if res.Graphs == nil {
			res.Graphs, res.Edges = map[string]upgradesv1beta1.ApplicationUpgrade{}, map[string][]judge.EdgeReport{}
		}
		res.Graphs[key(u)] = *u
		res.Edges[key(u)] = judge.GraphOrdering(res.Events, u)
		res.Reports[key(u)] = judge.Combine(res.Edges[key(u)])
	}
	for i := range list.Items {
		u := &list.Items[i]
		if _, ok := res.Graphs[key(u)]; !ok {
			res.Reports[key(u)] = judge.Ordering(res.Events, judge.Pair{Namespace: u.Namespace,
				Worker: u.Spec.Worker.DeploymentRef.Name, API: u.Spec.API.DeploymentRef.Name})
		}
	}
	h := judge.FromEvents(res.Events)
	if calls != nil {
		h = calls.History()
	}
	res.Judged = judge.Judge(judge.Input{History: h, Upgrades: respecced(judge.SpecsOf(created), judge.SpecsOf(beta.Items))})
	return nil
}

// respecced is final with, for every component whose target changed since
// the upgrade was created (a respec), no target image: the event log
// records no spec changes, so a write cannot be placed before or after
// the respec. Its dependents' writes are then judged against it rolled out
// to whatever template it runs, every old pod gone; its own writes are not
// judged (they match no target).
func respecced(created, final []judge.UpgradeSpec) []judge.UpgradeSpec {
	first := map[string]judge.UpgradeSpec{}
	for _, u := range created {
		first[u.Namespace+"/"+u.Name] = u
	}
	out := slices.Clone(final)
	for i := range out {
		u := &out[i]
		was, ok := first[u.Namespace+"/"+u.Name]
		if !ok {
			continue
		}
		if was.WorkerImage != u.WorkerImage {
			u.WorkerImage = ""
		}
		if was.APIImage != u.APIImage {
			u.APIImage = ""
		}
		u.Components = slices.Clone(u.Components)
		for j := range u.Components {
			c := &u.Components[j]
			if w, ok := was.Component(c.Name); !ok || w.Image != c.Image {
				c.Image = ""
			}
		}
	}
	return out
}

func key(u client.Object) string { return u.GetNamespace() + "/" + u.GetName() }

// allTerminal reports whether at least one ApplicationUpgrade exists and
// every one is Completed or Failed for its current generation (read at
// v1beta1, where a graph's phase is its own).
func allTerminal(ctx context.Context, l simulator.SharedLister) bool {
	objs, err := l.List(ctx, upgradesv1beta1.GroupVersion.WithKind("ApplicationUpgrade"), "")
	if err != nil || len(objs) == 0 {
		return false
	}
	for _, o := range objs {
		u := o.(*upgradesv1beta1.ApplicationUpgrade)
		if !u.Status.Phase.Terminal() || u.Status.ObservedGeneration != u.Generation {
			return false
		}
	}
	return true
}

func splitUpgrades(objs []client.Object) (app, upgrades []client.Object) {
	for _, o := range objs {
		switch o.(type) {
		case *upgradesv1alpha1.ApplicationUpgrade, *upgradesv1beta1.ApplicationUpgrade:
			upgrades = append(upgrades, o)
		default:
			app = append(app, o)
		}
	}
	return app, upgrades
}

func create(ctx context.Context, c client.Client, objs []client.Object) error {
	for _, o := range objs {
		if err := c.Create(ctx, o.DeepCopyObject().(client.Object)); err != nil {
			return fmt.Errorf("create %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, client.ObjectKeyFromObject(o), err)
		}
	}
	return nil
}

// rolloutCheck is the stop check of the roll-out before an upgrade
// (appRolledOut). It runs after every change until the app has rolled
// out, so its shallow copies (a pod struct is about a kilobyte) go into
// buffers kept from one check to the next.
type rolloutCheck struct {
	rss  []appsv1.ReplicaSet
	pods []corev1.Pod
}

// appRolledOut reports whether every Deployment is fully rolled out
// (rollout.Assess) or has failed — an upgrade of a broken app is the user's call.
func (c *rolloutCheck) appRolledOut(ctx context.Context, l simulator.SharedLister) bool {
	ds, err := l.List(ctx, appsv1.SchemeGroupVersion.WithKind("Deployment"), "")
	if err != nil {
		return false
	}
	for _, o := range ds {
		d := o.(*appsv1.Deployment)
		rsObjs, err1 := l.List(ctx, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), d.Namespace)
		podObjs, err2 := l.List(ctx, corev1.SchemeGroupVersion.WithKind("Pod"), d.Namespace)
		if err1 != nil || err2 != nil {
			return false
		}
		sel := labels.SelectorFromSet(d.Spec.Selector.MatchLabels)
		// Shallow copies: Assess reads and changes nothing, and its
		// verdict is read before the buffers are refilled.
		rss := c.rss[:0]
		for _, o := range rsObjs {
			if sel.Matches(labels.Set(o.GetLabels())) {
				rss = append(rss, *o.(*appsv1.ReplicaSet))
			}
		}
		pods := c.pods[:0]
		for _, o := range podObjs {
			if sel.Matches(labels.Set(o.GetLabels())) {
				pods = append(pods, *o.(*corev1.Pod))
			}
		}
		c.rss, c.pods = rss, pods
		if rollout.Assess(d, rss, pods, rollout.Options{}).State == rollout.Progressing {
			return false
		}
	}
	return otherWorkloadsRolledOut(ctx, l)
}

// otherWorkloadsRolledOut is appRolledOut for the StatefulSets
// (rollout.AssessStatefulSet) and DaemonSets (rollout.AssessDaemonSet
// with the namespace's ControllerRevisions).
func otherWorkloadsRolledOut(ctx context.Context, l simulator.SharedLister) bool {
	podsOf := func(ns string, sel *metav1.LabelSelector) ([]corev1.Pod, bool) {
		s, err := metav1.LabelSelectorAsSelector(sel)
		objs, err2 := l.List(ctx, corev1.SchemeGroupVersion.WithKind("Pod"), ns)
		if err != nil || err2 != nil {
			return nil, false
		}
		var pods []corev1.Pod
		for _, o := range objs {
			if s.Matches(labels.Set(o.GetLabels())) {
				pods = append(pods, *o.(*corev1.Pod))
			}
		}
		return pods, true
	}
	stss, err := l.List(ctx, appsv1.SchemeGroupVersion.WithKind("StatefulSet"), "")
	if err != nil {
		return false
	}
	for _, o := range stss {
		sts := o.(*appsv1.StatefulSet)
		pods, ok := podsOf(sts.Namespace, sts.Spec.Selector)
		if !ok || rollout.AssessStatefulSet(sts, pods, rollout.Options{}).State == rollout.Progressing {
			return false
		}
	}
	dss, err := l.List(ctx, appsv1.SchemeGroupVersion.WithKind("DaemonSet"), "")
	if err != nil {
		return false
	}
	for _, o := range dss {
		ds := o.(*appsv1.DaemonSet)
		pods, ok := podsOf(ds.Namespace, ds.Spec.Selector)
		revObjs, err := l.List(ctx, appsv1.SchemeGroupVersion.WithKind("ControllerRevision"), ds.Namespace)
		if !ok || err != nil {
			return false
		}
		revs := make([]appsv1.ControllerRevision, 0, len(revObjs))
		for _, r := range revObjs {
			revs = append(revs, *r.(*appsv1.ControllerRevision))
		}
		if rollout.AssessDaemonSet(ds, revs, pods, rollout.Options{}).State == rollout.Progressing {
			return false
		}
	}
	return true
}
