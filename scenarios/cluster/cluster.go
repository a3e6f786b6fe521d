// Package cluster is what the scenario steps talk to: a Cluster runs the
// operator against either the simulator (Sim) or a real API server (Real,
// the local control plane), records the history of both the cluster and the
// operator's calls, and injects the faults of the catalog
// (scenarios/faults) that the backend can produce (Inject).
package cluster

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/scenarios/faults"
	"github.com/lunadas/upgrade-operator/scenarios/judge"
)

// Backend names.
const (
	BackendSim  = "sim"
	BackendReal = "real"
)

// ErrUnsupported is returned for a step a backend cannot perform (a fault
// the real cluster cannot inject on demand); such scenarios are tagged
// @sim-only.
var ErrUnsupported = errors.New("not supported on this backend")

// refuse is a backend's one-line refusal of fault f.
func refuse(backend string, f faults.Fault, why string) error {
	return fmt.Errorf("fault %s cannot run on the %s backend: %s: %w", f, backend, why, ErrUnsupported)
}

// Policy is the operator build under test: the product's (the zero value)
// or a deliberately weakened one (scenarios/faults/mutants).
type Policy struct {
	// Name names the build in reports ("product" when empty).
	Name string
	// Customize changes the reconciler before it runs (e.g. AssessFunc).
	Customize func(*controller.ApplicationUpgradeReconciler)
	// Wrap wraps the reconciler (e.g. a different transition policy).
	Wrap func(reconcile.Reconciler) reconcile.Reconciler
}

// String is the policy's name.
func (p Policy) String() string {
	if p.Name == "" {
		return "product"
	}
	return p.Name
}

// Options configure a Cluster for one scenario.
type Options struct {
	// Scenario names the scenario (namespace, artifacts).
	Scenario string
	// Seed drives every random choice of the scenario (the simulator, fault
	// schedules, names).
	Seed int64
	// Policy is the operator build under test.
	Policy Policy
	// Nodes is the number of kwok nodes the scenario needs (0 or 1: the one
	// node), named simulator.NodeNames / controlplane.NodeNames: the
	// simulator creates them; the local control plane adds the missing
	// ones (nodes are cluster-wide: later scenarios of the suite see them).
	Nodes int
}

// Condition is polled by Eventually and Consistently; an error stops the wait.
type Condition func(ctx context.Context) (bool, error)

// Cluster is one scenario's cluster with the operator running.
type Cluster interface {
	// Backend is BackendSim or BackendReal.
	Backend() string
	// Namespace is the scenario's own namespace.
	Namespace() string
	// Client talks to the API server as a user does (not through the operator).
	Client() client.Client
	// Eventually returns once cond holds, or fails after timeout (virtual
	// time in the simulator); what names the condition in the error.
	Eventually(ctx context.Context, what string, timeout time.Duration, cond Condition) error
	// Consistently fails as soon as cond does not hold during d.
	Consistently(ctx context.Context, what string, d time.Duration, cond Condition) error
	// Inject injects a fault of the catalog (scenarios/faults, the
	// syntax of make simulate --faults) now: "@N" counts the operator's API
	// calls from now, "@T" is the time from now. A fault the backend
	// cannot produce is refused with one line saying why (wrapping
	// ErrUnsupported).
	Inject(ctx context.Context, f faults.Fault) error
	// Fired lists the faults fired so far (each kill of a crash once).
	Fired() []faults.Fired
	// Violations are what the fault actors saw that must never happen
	// (gitops-revert: the upgrade Completed while its workload runs the
	// reverted image); a scenario with any fails.
	Violations() []string
	// History is what was recorded so far.
	History() judge.History
	// Elapsed is the time since the scenario started (virtual in the simulator).
	Elapsed() time.Duration
	// Close stops the operator and releases the scenario's resources.
	Close(ctx context.Context) error
}

// SimOnly is implemented by backends that run more than one operator
// replica.
type SimOnly interface {
	// AddStandbyReplica runs a second operator replica under leader
	// election; the first is the leader.
	AddStandbyReplica(ctx context.Context) error
}

// instrument returns the hooks both backends give the operator's wiring for
// process replica: customize applies the policy under test to the
// reconciler and routes its calls through the recording (and faulting)
// client; wrap applies the policy's wrapper and numbers the reconciles.
func instrument(p Policy, rec *judge.Recorder, b *faults.Boundary, replica int) (customize func(*controller.ApplicationUpgradeReconciler), wrap func(reconcile.Reconciler) reconcile.Reconciler) {
	customize = func(r *controller.ApplicationUpgradeReconciler) {
		if p.Customize != nil {
			p.Customize(r)
		}
		r.Client = rec.WrapClient(r.Client, replica, b)
	}
	wrap = func(inner reconcile.Reconciler) reconcile.Reconciler {
		if p.Wrap != nil {
			inner = p.Wrap(inner)
		}
		return rec.WrapReconciler(inner, replica)
	}
	return customize, wrap
}

// namespaceFor derives a DNS-1123 namespace name from the scenario name and seed.
func namespaceFor(scenario string, seed int64) string {
	var b strings.Builder
	for _, r := range strings.ToLower(scenario) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", scenario, seed)
	prefix := strings.Trim(b.String(), "-")
	if prefix == "" {
		prefix = "scenario"
	}
	return prefix + fmt.Sprintf("-%05x", h.Sum32()&0xfffff)
}
