package realbench

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
)

// Drivers of an upgrade.
const (
	DriverOperator = "operator"
	DriverPoller   = "poller"
	// DriverAlone writes both images at once, no ordering: each rollout alone.
	DriverAlone = "alone"
)

// kwok stage annotations (deploy/kwok/README.md).
const (
	annCreate       = "pod-create.stage.kwok.x-k8s.io/delay"
	annCreateJitter = "pod-create.stage.kwok.x-k8s.io/jitter-delay"
	annReady        = "pod-ready.stage.kwok.x-k8s.io/delay"
	annReadyJitter  = "pod-ready.stage.kwok.x-k8s.io/jitter-delay"
	annDelete       = "pod-delete.stage.kwok.x-k8s.io/delay"
	annDeleteJitter = "pod-delete.stage.kwok.x-k8s.io/jitter-delay"
)

// Timing is a fixed (jitter-free) set of kwok pod delays; the zero value
// keeps the demo's own, jittered, annotations.
type Timing struct {
	Create time.Duration `json:"create"`
	Ready  time.Duration `json:"ready"`
	Delete time.Duration `json:"delete"`
}

// IsZero reports whether t keeps the demo's timings.
func (t Timing) IsZero() bool { return t == Timing{} }

func (t Timing) String() string {
	if t.IsZero() {
		return "demo (ready 3–5 s, delete 8–12 s)"
	}
	return fmt.Sprintf("fixed (create %s, ready %s, delete %s)", t.Create, t.Ready, t.Delete)
}

func (t Timing) apply(d *appsv1.Deployment) {
	if t.IsZero() {
		return
	}
	a := d.Spec.Template.Annotations
	if a == nil {
		a = map[string]string{}
		d.Spec.Template.Annotations = a
	}
	for _, k := range []string{annCreateJitter, annReadyJitter, annDeleteJitter} {
		delete(a, k)
	}
	a[annCreate], a[annReady], a[annDelete] = t.Create.String(), t.Ready.String(), t.Delete.String()
}

// Config sizes a make bench run; zero fields take DefaultConfig's values.
type Config struct {
	// Demo is the number of demo-app upgrades (kwok jitter as shipped) by
	// the operator, and as many by the poller.
	Demo int
	// Fixed is the number of fixed-timing upgrades by each of the
	// operator, the poller and no ordering (both images at once).
	Fixed int
	// FixedTiming are the fixed pod delays (the middle of the demo's ranges).
	FixedTiming Timing
	// Stagger separates the starts of the latency phase's upgrades.
	Stagger time.Duration
	// Sizes are the numbers of unrelated Deployments of the scale phase.
	Sizes []int
	// Scopes are the --watch-namespaces settings of the scale phase:
	// "all", "listed", "own" (see ScaleRow.Scope).
	Scopes []string
	// FillerNamespaces spread the unrelated Deployments.
	FillerNamespaces int
	// ChurnRate is the updates per second to unrelated Deployments during each scale upgrade.
	ChurnRate float64
	// ScaleTiming are the pod delays of the scale phase's upgrades.
	ScaleTiming Timing
	// ScaleUpgrades run side by side in each scale row (their mean is
	// reported: one upgrade's request count varies by a few).
	ScaleUpgrades int
	// LoadUpgrades run side by side in the load phase, LoadFillers
	// unrelated Deployments churned at ChurnRate meanwhile (issue 21: the
	// handoff under load).
	LoadUpgrades int
	LoadFillers  int
	// Phases selects "latency", "scale" and/or "load".
	Phases []string
}

// DefaultConfig is what make bench runs.
func DefaultConfig() Config {
	return Config{
		Demo: 20, Fixed: 5,
		FixedTiming: Timing{Create: time.Second, Ready: 4 * time.Second, Delete: 10 * time.Second},
		Stagger:     2 * time.Second,
		Sizes:       []int{0, 1000, 5000}, Scopes: []string{"all", "listed", "own"},
		FillerNamespaces: 10, ChurnRate: 20,
		ScaleTiming:   Timing{Create: 200 * time.Millisecond, Ready: time.Second, Delete: 2 * time.Second},
		ScaleUpgrades: 8,
		LoadUpgrades:  20, LoadFillers: 1000,
		Phases: []string{"latency", "scale", "load"},
	}
}

// WithDefaults fills zero fields from DefaultConfig.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.Demo == 0 {
		c.Demo = d.Demo
	}
	if c.Fixed == 0 {
		c.Fixed = d.Fixed
	}
	if c.FixedTiming.IsZero() {
		c.FixedTiming = d.FixedTiming
	}
	if c.Stagger == 0 {
		c.Stagger = d.Stagger
	}
	if c.Sizes == nil {
		c.Sizes = d.Sizes
	}
	if c.Scopes == nil {
		c.Scopes = d.Scopes
	}
	if c.FillerNamespaces == 0 {
		c.FillerNamespaces = d.FillerNamespaces
	}
	if c.ChurnRate == 0 {
		c.ChurnRate = d.ChurnRate
	}
	if c.ScaleTiming.IsZero() {
		c.ScaleTiming = d.ScaleTiming
	}
	if c.ScaleUpgrades == 0 {
		c.ScaleUpgrades = d.ScaleUpgrades
	}
	if c.LoadUpgrades == 0 {
		c.LoadUpgrades = d.LoadUpgrades
	}
	if c.LoadFillers == 0 {
		c.LoadFillers = d.LoadFillers
	}
	if c.Phases == nil {
		c.Phases = d.Phases
	}
	return c
}
