package controller

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
)

// Metrics of the ApplicationUpgrade controller, served on the manager's
// metrics endpoint (controller-runtime's registry).
var (
	phaseDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "upgrade_operator_applicationupgrade_phase_duration_seconds",
		Help:    "Seconds an ApplicationUpgrade spent in a phase, observed when it leaves the phase.",
		Buckets: prometheus.ExponentialBuckets(0.5, 2, 14), // 0.5 s … ~68 min
	}, []string{"phase"})
	handoff = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "upgrade_operator_applicationupgrade_handoff_seconds",
		Help: "Seconds from the reconcile that found the worker fully rolled out (every old pod gone) to the API image write.",
		// 1 ms … ~65 s
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 17),
	})
	imageWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "upgrade_operator_applicationupgrade_image_writes_total",
		Help: "Image writes to Deployments, by component (worker, api).",
	}, []string{"component"})
)

var phases = &phaseCollector{desc: prometheus.NewDesc("upgrade_operator_applicationupgrades",
	"ApplicationUpgrades by phase.", []string{"phase"}, nil)}

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
	var list upgradesv1alpha1.ApplicationUpgradeList
	if err := (*r).List(ctx, &list); err != nil {
		return
	}
	counts := map[upgradesv1alpha1.Phase]int{}
	for _, p := range []upgradesv1alpha1.Phase{upgradesv1alpha1.PhasePending, upgradesv1alpha1.PhaseUpgradingWorkers,
		upgradesv1alpha1.PhaseWaitingForWorkers, upgradesv1alpha1.PhaseUpgradingAPI, upgradesv1alpha1.PhaseWaitingForAPI,
		upgradesv1alpha1.PhaseCompleted, upgradesv1alpha1.PhaseFailed} {
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

// observeTransition records the duration of the phase being left and, for
// an API write, the handoff from the UpgradingAPI phase's start.
func observeTransition(prev *upgradesv1alpha1.ApplicationUpgradeStatus, next upgradesv1alpha1.Phase, now time.Time) {
	if prev.Phase == "" || prev.Phase == next || prev.PhaseStartTime == nil {
		return
	}
	phaseDuration.WithLabelValues(string(prev.Phase)).Observe(now.Sub(prev.PhaseStartTime.Time).Seconds())
}

func observeWrite(component string, prev *upgradesv1alpha1.ApplicationUpgradeStatus, now time.Time) {
	imageWrites.WithLabelValues(component).Inc()
	if component == "api" && prev.Phase == upgradesv1alpha1.PhaseUpgradingAPI && prev.PhaseStartTime != nil {
		handoff.Observe(now.Sub(prev.PhaseStartTime.Time).Seconds())
	}
}
