package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/deploy"
	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/real/realcluster"
)

// Runner runs cases on Env, one namespace each, writing each case's event
// log and trace under Artifacts/<namespace>/.
type Runner struct {
	Env       Env
	Client    client.Client
	Artifacts string
}

// NewRunner connects to env and makes sure the CRDs are installed.
func NewRunner(ctx context.Context, env Env, artifacts string) (*Runner, error) {
	c, err := client.New(env.RESTConfig, client.Options{Scheme: realcluster.Scheme()})
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", env.Name, err)
	}
	if err := InstallCRDs(ctx, c); err != nil {
		return nil, err
	}
	return &Runner{Env: env, Client: c, Artifacts: artifacts}, nil
}

// InstallCRDs installs the operator's CRDs and waits until they are established.
func InstallCRDs(ctx context.Context, c client.Client) error {
	return realcluster.InstallCRDs(ctx, c, deploy.CRDs, "crd/bases", time.Minute)
}

// CreateNamespace creates ns (an existing one is kept).
func (r *Runner) CreateNamespace(ctx context.Context, ns string) error {
	err := r.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return nil
}

// Run is one case in progress.
type Run struct {
	r            *Runner
	Case         Case
	Namespace    string
	Dir          string
	EventLog     string
	start        time.Time
	rec          *eventlog.Recorder
	trace        *Trace
	obs          *realcluster.Observer
	files        []*os.File
	WorkerTarget string
	APITarget    string
	applied      time.Time
}

// Prepare creates the case's namespace, starts recording, creates both
// Deployments at their old images and waits until they are fully rolled out.
func (r *Runner) Prepare(ctx context.Context, c Case, ns string) (*Run, error) {
	run := &Run{r: r, Case: c, Namespace: ns, Dir: filepath.Join(r.Artifacts, ns), start: time.Now()}
	run.WorkerTarget, run.APITarget = r.Env.Images.WorkerNew, r.Env.Images.APINew
	workerStart, workerReplicas := r.Env.Images.WorkerOld, c.Worker.Replicas
	if c.BadWorker {
		run.WorkerTarget = r.Env.Images.Bad
	}
	if c.ScaleFromZero {
		workerStart, workerReplicas = run.WorkerTarget, 0
	}
	if err := os.MkdirAll(run.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	run.EventLog = filepath.Join(run.Dir, "events.jsonl")
	evf, err := os.Create(run.EventLog)
	if err != nil {
		return nil, fmt.Errorf("create event log: %w", err)
	}
	trf, err := os.Create(filepath.Join(run.Dir, "trace.jsonl"))
	if err != nil {
		evf.Close()
		return nil, fmt.Errorf("create trace: %w", err)
	}
	run.files = []*os.File{evf, trf}
	run.rec = eventlog.NewRecorder(run.start, evf)
	run.trace = NewTrace(run.start, trf)
	if err := r.CreateNamespace(ctx, ns); err != nil {
		run.Close()
		return nil, err
	}
	if run.obs, err = realcluster.Observe(ctx, r.Env.RESTConfig, ns, tee{run.rec, run.trace}); err != nil {
		run.Close()
		return nil, err
	}
	worker := c.Worker
	worker.Replicas = workerReplicas
	objs := []client.Object{
		r.Env.deployment(ns, WorkerName, "worker", workerStart, worker),
		r.Env.deployment(ns, APIName, "api", r.Env.Images.APIOld, c.API),
	}
	if err := realcluster.Apply(ctx, r.Client, objs); err != nil {
		run.Close()
		return nil, err
	}
	if err := realcluster.WaitRolledOut(ctx, r.Client, ns, 3*time.Minute); err != nil {
		run.Close()
		return nil, err
	}
	if err := realcluster.WaitCountersComplete(ctx, r.Client, ns, 3*time.Minute); err != nil {
		run.Close()
		return nil, err
	}
	return run, nil
}

// Apply scales the worker up first for ScaleFromZero cases, then creates
// the ApplicationUpgrade.
func (run *Run) Apply(ctx context.Context) error {
	c := run.r.Client
	if run.Case.ScaleFromZero {
		patch := client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, run.Case.Worker.Replicas))
		if err := c.Patch(ctx, run.r.Env.deployment(run.Namespace, WorkerName, "worker", "", Shape{}), patch); err != nil {
			return fmt.Errorf("scale %s/%s: %w", run.Namespace, WorkerName, err)
		}
	}
	run.applied = time.Now()
	if err := c.Create(ctx, upgrade(run.Namespace, run.WorkerTarget, run.APITarget)); err != nil {
		return fmt.Errorf("create applicationupgrade %s/%s: %w", run.Namespace, UpgradeName, err)
	}
	return nil
}

// Wait waits until the upgrade is Completed or Failed (or timeout), until
// the watches have delivered everything up to that point, and returns the
// result. A timeout returns the result so far with the error.
func (run *Run) Wait(ctx context.Context, timeout time.Duration) (*Result, error) {
	ups, waitErr := realcluster.WaitTerminal(ctx, run.r.Client, run.Namespace, timeout, nil)
	if waitErr == nil {
		waitErr = run.catchUp(ctx, ups[0].Status.Phase)
	}
	run.obs.Stop()
	res := &Result{Case: run.Case, Namespace: run.Namespace, Dir: run.Dir, EventLog: run.EventLog,
		WorkerTarget: run.WorkerTarget, APITarget: run.APITarget, Elapsed: time.Since(run.applied),
		Events: run.rec.Events(), Trace: run.trace.Entries()}
	var u upgradesv1alpha1.ApplicationUpgrade
	if err := run.r.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: UpgradeName}, &u); err == nil {
		res.Upgrade = u
	}
	res.Report = judge.Ordering(res.Events, judge.Pair{Namespace: run.Namespace, Worker: WorkerName, API: APIName})
	res.Judged = judge.JudgeEvents(res.Events, judge.AlphaSpecs([]upgradesv1alpha1.ApplicationUpgrade{res.Upgrade}))
	return res, errors.Join(waitErr, run.rec.Err())
}

// WaitOldWorkerPodsGone is Wait, then waits until the event log shows
// every old worker pod deleted (a mutated operator completes earlier).
func (run *Run) WaitOldWorkerPodsGone(ctx context.Context, timeout time.Duration) (*Result, error) {
	began := time.Now()
	if _, err := realcluster.WaitTerminal(ctx, run.r.Client, run.Namespace, timeout, nil); err != nil {
		return run.Wait(ctx, time.Second)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout-time.Since(began), true, func(context.Context) (bool, error) {
		s := eventlog.Final(run.rec.Events())
		return len(s.OldPods(run.Namespace, WorkerName)) == 0, nil
	})
	res, waitErr := run.Wait(ctx, timeout)
	return res, errors.Join(err, waitErr)
}

// catchUp waits until the recorder has seen the terminal phase and its
// view of the namespace's pods equals a fresh list: every pod deletion
// before the end was delivered by the (independent) pod watch.
func (run *Run) catchUp(ctx context.Context, phase upgradesv1alpha1.Phase) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := run.r.Client.List(ctx, &pods, client.InNamespace(run.Namespace)); err != nil {
			return false, nil
		}
		listed := make([]string, 0, len(pods.Items))
		for _, p := range pods.Items {
			listed = append(listed, p.Name)
		}
		sort.Strings(listed)
		live, sawPhase := map[string]bool{}, false
		for _, e := range run.rec.Events() {
			switch e.Event {
			case eventlog.PodCreated:
				live[e.Name] = true
			case eventlog.PodDeleted:
				delete(live, e.Name)
			case eventlog.Phase:
				sawPhase = sawPhase || (e.Name == UpgradeName && e.Phase == string(phase))
			}
		}
		if !sawPhase || len(live) != len(listed) {
			return false, nil
		}
		for _, n := range listed {
			if !live[n] {
				return false, nil
			}
		}
		return true, nil
	})
}

// Close stops recording and closes the files.
func (run *Run) Close() {
	if run.obs != nil {
		run.obs.Stop()
	}
	for _, f := range run.files {
		f.Close()
	}
}

type tee []realcluster.Sink

func (t tee) Observe(typ watch.EventType, obj client.Object, at time.Time) {
	for _, s := range t {
		s.Observe(typ, obj, at)
	}
}
