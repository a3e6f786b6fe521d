package realcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lunadas/upgrade-operator/deploy"
	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/scenarios/eventlog"
	"github.com/lunadas/upgrade-operator/scenarios/input/manifests"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
	"github.com/lunadas/upgrade-operator/scenarios/render/console"
)

// DemoConfig configures RunDemo.
type DemoConfig struct {
	RESTConfig *rest.Config
	// EventLogPath, when set, receives the JSON Lines event log.
	EventLogPath string
	// Timeout bounds the upgrade (after the demo app is rolled out).
	Timeout time.Duration
	// Out receives the transcript; nil prints nothing.
	Out io.Writer
	// WatchNamespaces is the manager's --watch-namespaces.
	WatchNamespaces []string
	// StartManager, when set, starts the manager instead of the in-process
	// one (e.g. the built binary as a ServiceAccount); the channel yields
	// its exit error. It is called once the demo app is rolled out.
	StartManager func(ctx context.Context) (<-chan error, error)
	// SkipCRDs: the caller installed the CRDs (e.g. `helm install` of the
	// chart, whose CRD calls the operator's own conversion webhook), so
	// RunDemo neither installs them nor points their conversion at itself.
	SkipCRDs bool
	// PodTemplate, when set, rewrites the demo Deployments' pod templates
	// before they are applied (make demo REAL_NODE=1: real containers on
	// the real node, realnode.AdaptPodTemplate).
	PodTemplate func(*corev1.PodTemplateSpec) error
}

const demoNamespace = "job-system"

// RunDemo installs the CRDs and the demo app, waits for the app to be
// rolled out, starts the manager in-process, applies the sample
// ApplicationUpgrade and waits until it is Completed or Failed. It returns
// the summary and the verdict: judge.Verdict (an upgrade not Completed,
// an edge's ordering) and the one judge's (judge.Judge: the porcupine
// model, the invariants, every edge's ordering), whose failure writes the
// artifacts beside the event log and names them.
func RunDemo(ctx context.Context, cfg DemoConfig) (*console.Summary, error) {
	c, err := client.New(cfg.RESTConfig, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	if !cfg.SkipCRDs {
		if err := InstallCRDs(ctx, c, deploy.CRDs, "crd/bases", time.Minute); err != nil {
			return nil, err
		}
	}
	objs, err := manifests.LoadFS(deploy.Demo, "demo", c.Scheme())
	if err != nil {
		return nil, err
	}
	sample, err := manifests.LoadFS(deploy.Demo, "samples", c.Scheme())
	if err != nil {
		return nil, err
	}
	var logOut io.Writer
	if cfg.EventLogPath != "" {
		f, err := os.Create(cfg.EventLogPath)
		if err != nil {
			return nil, fmt.Errorf("create event log: %w", err)
		}
		defer f.Close()
		logOut = f
	}
	start := time.Now()
	rec := eventlog.NewRecorder(start, logOut)
	tr := console.New(cfg.Out, start)
	obs, err := Observe(ctx, cfg.RESTConfig, demoNamespace, recorderTee{rec, tr})
	if err != nil {
		return nil, err
	}
	defer obs.Stop()
	if cfg.PodTemplate != nil {
		for _, o := range objs {
			if d, ok := o.(*appsv1.Deployment); ok {
				if err := cfg.PodTemplate(&d.Spec.Template); err != nil {
					return nil, fmt.Errorf("deployment %s/%s: %w", d.Namespace, d.Name, err)
				}
			}
		}
	}
	if err := Apply(ctx, c, objs); err != nil {
		return nil, err
	}
	if err := WaitRolledOut(ctx, c, demoNamespace, 2*time.Minute); err != nil {
		return nil, err
	}
	mgrCtx, stopMgr := context.WithCancel(ctx)
	defer stopMgr()
	mgrErr, err := startManager(mgrCtx, cfg)
	if err != nil {
		return nil, err
	}
	if err := Apply(ctx, c, sample); err != nil {
		return nil, err
	}
	ups, err := WaitTerminal(ctx, c, demoNamespace, cfg.Timeout, mgrErr)
	if err != nil {
		return nil, err
	}
	sum := summarize(ups, rec.Events(), time.Since(start))
	sum.KubeEvents = settledKubeEvents(ctx, c, demoNamespace, start, ups)
	obs.Stop()
	tr.Finish(*sum)
	// the one judge (judge.Judge) over the event log; on a failure its
	// artifacts go beside the event log
	sum.Judged = judge.JudgeEvents(sum.Events, judge.AlphaSpecs(sum.Upgrades))
	return sum, errors.Join(rec.Err(), judge.Verdict(sum.Upgrades, sum.Reports), sum.Judged.Failure(cfg.EventLogPath, "demo", "make demo"))
}

func summarize(ups []upgradesv1alpha1.ApplicationUpgrade, events []eventlog.Event, elapsed time.Duration) *console.Summary {
	sum := &console.Summary{Upgrades: ups, Elapsed: elapsed, Events: events, Reconciles: -1, Reports: map[string]judge.Report{}}
	for _, u := range ups {
		sum.Reports[u.Namespace+"/"+u.Name] = judge.Ordering(events, judge.Pair{Namespace: u.Namespace,
			Worker: u.Spec.Worker.DeploymentRef.Name, API: u.Spec.API.DeploymentRef.Name})
	}
	return sum
}

// startManager runs the operator's manager in-process; the returned channel
// yields its exit error.
func startManager(ctx context.Context, cfg DemoConfig) (<-chan error, error) {
	if cfg.StartManager != nil {
		return cfg.StartManager(ctx)
	}
	run, err := manager.Start(ctx, cfg.RESTConfig, manager.Options{WatchNamespaces: cfg.WatchNamespaces, MetricsAddr: "0", ProbeAddr: "0"})
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	return done, nil
}

// WaitTerminal waits until every ApplicationUpgrade in namespace is
// Completed or Failed for its generation, or the manager exits, or timeout.
func WaitTerminal(ctx context.Context, c client.Reader, namespace string, timeout time.Duration, mgrErr <-chan error) ([]upgradesv1alpha1.ApplicationUpgrade, error) {
	var list upgradesv1alpha1.ApplicationUpgradeList
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-mgrErr:
			return false, fmt.Errorf("manager stopped: %w", err)
		default:
		}
		if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
			return false, nil
		}
		for _, u := range list.Items {
			if !u.Status.Phase.Terminal() || u.Status.ObservedGeneration != u.Generation {
				return false, nil
			}
		}
		return len(list.Items) > 0, nil
	})
	if err != nil {
		return list.Items, fmt.Errorf("waiting for the upgrades in %s to finish (timeout %s): %w", namespace, timeout, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// settledKubeEvents is kubeEvents once every Completed upgrade's
// ReasonCompleted event is listed, or after 10 s: the manager's event
// broadcaster writes events asynchronously, after the status write that
// WaitTerminal saw.
func settledKubeEvents(ctx context.Context, c client.Reader, namespace string, start time.Time, ups []upgradesv1alpha1.ApplicationUpgrade) []console.KubeEvent {
	want := 0
	for _, u := range ups {
		if u.Status.Phase == upgradesv1alpha1.PhaseCompleted {
			want++
		}
	}
	var events []console.KubeEvent
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		events = kubeEvents(ctx, c, namespace, start)
		n := 0
		for _, e := range events {
			if e.Reason == appupgrade.ReasonCompleted {
				n++
			}
		}
		return n >= want, nil
	})
	return events
}

// kubeEvents lists the events.k8s.io events regarding ApplicationUpgrades in
// namespace, oldest first; a listing error yields none (they are informative).
func kubeEvents(ctx context.Context, c client.Reader, namespace string, start time.Time) []console.KubeEvent {
	var list eventsv1.EventList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil
	}
	var out []console.KubeEvent
	for _, e := range list.Items {
		if e.Regarding.Kind != "ApplicationUpgrade" {
			continue
		}
		at := e.EventTime.Time
		if at.IsZero() {
			at = e.CreationTimestamp.Time
		}
		out = append(out, console.KubeEvent{At: at.Sub(start), Object: e.Regarding.Namespace + "/" + e.Regarding.Name,
			Type: e.Type, Reason: e.Reason, Note: e.Note})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}
