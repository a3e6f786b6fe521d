package controller

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
)

// Metrics of the ApplicationUpgrade controller, served on the manager's
// metrics endpoint (controller-runtime's registry).
var (
	phaseDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "upgrade_operator_applicationupgrade_phase_duration_seconds",
		Help:    "Seconds an ApplicationUpgrade spent in a phase (Pending, Progressing), observed when it leaves the phase.",
		Buckets: prometheus.ExponentialBuckets(0.5, 2, 14), // 0.5 s … ~68 min
	}, []string{"phase"})
	handoff = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "upgrade_operator_applicationupgrade_handoff_seconds",
		Help: "Seconds from the reconcile that found a component's last dependency fully rolled out (every old pod gone) to the component's image write, measured in-process with the reconciler's clock.",
		// 1 ms … ~65 s
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 17),
	})
	// Labelled by the workload's kind, a bounded set: not by component
	// name, which whoever creates an upgrade chooses (one series per name
	// ever written, kept for the process's life, and readable by anyone
	// who can scrape the endpoint).
	imageWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "upgrade_operator_applicationupgrade_image_writes_total",
		Help: "Image writes to workloads, by workload kind (Deployment, StatefulSet, DaemonSet).",
	}, []string{"kind"})
)

var phases = &phaseCollector{desc: prometheus.NewDesc("upgrade_operator_applicationupgrades",
	"ApplicationUpgrades by phase (v1beta1: Pending, Progressing, Completed, Failed).", []string{"phase"}, nil)}

func init() {
	metrics.Registry.MustRegister(phaseDuration, handoff, imageWrites, phases)
}

// SetPhaseMetricsReader sets the reader (the manager's cached client) that
// upgrade_operator_applicationupgrades{phase} lists at scrape time; until
// set, the metric is empty. The last manager created in a process wins.
func SetPhaseMetricsReader(r client.Reader) { phases.reader.Store(&r) }

// phaseCollector exports the number of ApplicationUpgrades in each phase,
// listed at scrape time, so it is right after a restart with no state kept.
type phaseCollector struct {
	reader atomic.Pointer[client.Reader]
	desc   *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c *phaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *phaseCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.reader.Load()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var list v1beta1.ApplicationUpgradeList
	if err := (*r).List(ctx, &list); err != nil {
		return
	}
	counts := map[v1beta1.Phase]int{}
	for _, p := range []v1beta1.Phase{v1beta1.PhasePending, v1beta1.PhaseProgressing, v1beta1.PhaseCompleted, v1beta1.PhaseFailed} {
		counts[p] = 0
	}
	for _, u := range list.Items {
		if u.Status.Phase != "" {
			counts[u.Status.Phase]++
		}
	}
	for p, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), string(p))
	}
}

// observeTransition records the duration of the upgrade phase being left.
func observeTransition(prev *v1beta1.ApplicationUpgradeStatus, next v1beta1.Phase, now time.Time) {
	if prev.Phase == "" || prev.Phase == next || prev.PhaseStartTime == nil {
		return
	}
	phaseDuration.WithLabelValues(string(prev.Phase)).Observe(now.Sub(prev.PhaseStartTime.Time).Seconds())
}

// readyMarks holds, per upgrade UID and component, when this process first
// saw the component's last dependency rolled out: the handoff metric's
// start. It is process-wide (reconcilers are copied by value in tests).
var readyMarks sync.Map

// markReady notes, for the handoff metric, when this process first decided
// a component Upgrading because its dependencies rolled out; a component
// back at Pending, or a finished upgrade, forgets its mark. Marks live in
// memory only: after a restart the next handoff of a component already
// marked before it is not observed.
func (r *ApplicationUpgradeReconciler) markReady(u *v1beta1.ApplicationUpgrade, g appupgrade.Graph, plan appupgrade.Plan) {
	deps := map[string]int{}
	for _, c := range u.Spec.Components {
		deps[c.Name] = len(c.DependsOn)
	}
	for _, c := range plan.Components {
		key := string(u.UID) + "/" + c.Name
		switch {
		case c.Phase == v1beta1.ComponentUpgrading && c.Reason == appupgrade.ReasonDependenciesRolled && deps[c.Name] > 0:
			readyMarks.LoadOrStore(key, r.now())
		case c.Phase == v1beta1.ComponentPending || c.Phase.Terminal() || plan.Phase.Terminal():
			readyMarks.Delete(key)
		}
	}
}

// observeWrite counts an image write to a workload of kind and, when
// component's dependencies were seen rolled out by this process, the
// handoff.
func (r *ApplicationUpgradeReconciler) observeWrite(u *v1beta1.ApplicationUpgrade, component string, kind v1beta1.WorkloadKind) {
	imageWrites.WithLabelValues(string(kind)).Inc()
	if at, ok := readyMarks.LoadAndDelete(string(u.UID) + "/" + component); ok {
		handoff.Observe(r.now().Sub(at.(time.Time)).Seconds())
	}
}
