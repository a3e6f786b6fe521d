// Package mutants holds deliberately weakened readiness and transition
// policies of the ApplicationUpgrade operator. They exist to prove that the
// scenario checks can fail: `make test-mutants` runs cases C01–C04 and the @mutants graph scenarios against
// each mutant, on the simulator and on the real control plane, and passes
// only if every mutant is caught. Tests select them through cluster.Policy;
// nothing in operator/ can reach them.
package mutants

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/operator/rollout"
	"github.com/lunadas/upgrade-operator/scenarios/cluster"
)

// Mutant is one weakened build of the operator.
type Mutant struct {
	// Policy is the build (Policy.Name is the mutant's name).
	Policy cluster.Policy
	// Description says what was weakened, in the terms of the definition of
	// "fully rolled" (shared/reference/rollout-semantics.md).
	Description string
	// Equivalent marks a weakening the product's other guards mask: the
	// checks must NOT fail on it (it shows they do not cry wolf).
	Equivalent bool
}

// Name is the mutant's name.
func (m Mutant) Name() string { return m.Policy.Name }

// All are the mutants every one of which the checks must catch.
var All = []Mutant{CountersOnly, NoObservedGeneration, IgnoreTerminatingPods, TwoTransitions, AnyDependency, EarlyCompleted}

// Equivalents are weakenings of the product rule that its other parts
// mask; the checks must pass on them.
var Equivalents = []Mutant{ProductWithoutObservedGeneration}

// FaultOnly are mutants that only a fault schedule shows, not C01–C04:
// scenarios/faults runs each under the schedule that catches it
// (TestNoLeaseGuardMutantCaughtByAPausedLeader).
var FaultOnly = []Mutant{NoLeaseGuard}

// ByName returns the mutant (of All, Equivalents or FaultOnly) named name.
func ByName(name string) (Mutant, bool) {
	for _, m := range append(append(append([]Mutant(nil), All...), Equivalents...), FaultOnly...) {
		if m.Name() == name {
			return m, true
		}
	}
	return Mutant{}, false
}

func assessWith(f controller.AssessFunc) func(*controller.ApplicationUpgradeReconciler) {
	return func(r *controller.ApplicationUpgradeReconciler) { r.AssessFunc = f }
}

// countersOnly is `kubectl rollout status`: the generation observed and
// the counters, no status.terminatingReplicas, no pod list.
func countersOnly(d *appsv1.Deployment, rss []appsv1.ReplicaSet, _ []corev1.Pod, o rollout.Options) rollout.Verdict {
	d = d.DeepCopy()
	d.Status.TerminatingReplicas = nil
	v := rollout.Assess(d, rss, nil, o)
	if v.Reason == rollout.ReasonNewPodsNotCreated {
		return rollout.Verdict{State: rollout.Rolled, Reason: rollout.ReasonRolled, Message: "counters complete (mutant)"}
	}
	return v
}

// observed pretends the Deployment controller has seen the current spec.
func observed(d *appsv1.Deployment) *appsv1.Deployment {
	d = d.DeepCopy()
	d.Status.ObservedGeneration = d.Generation
	return d
}

// CountersOnly trusts the counters as `kubectl rollout status`, Helm
// --wait and the seed do: replicas == updated == available, generation
// observed; terminating pods are invisible to it.
var CountersOnly = Mutant{
	Policy:      cluster.Policy{Name: "counters-only", Customize: both(assessWith(countersOnly), countersOnlyKinds)},
	Description: "readiness from the counters alone (kubectl rollout status, for every workload kind): no terminatingReplicas, no pod list",
}

// NoObservedGeneration is the counters rule without its first guard: a
// freshly patched Deployment still shows the previous rollout's "complete"
// counters until the Deployment controller observes the new generation.
var NoObservedGeneration = Mutant{
	Policy: cluster.Policy{Name: "no-observed-generation", Customize: assessWith(
		func(d *appsv1.Deployment, rss []appsv1.ReplicaSet, pods []corev1.Pod, o rollout.Options) rollout.Verdict {
			return countersOnly(observed(d), rss, pods, o)
		})},
	Description: "the counters rule without the observedGeneration >= generation check",
}

// IgnoreTerminatingPods lists the pods but drops those with a
// deletionTimestamp (as controller.FilterActivePods does), and does not
// read status.terminatingReplicas.
var IgnoreTerminatingPods = Mutant{
	Policy: cluster.Policy{Name: "ignore-terminating-pods", Customize: both(assessWith(
		func(d *appsv1.Deployment, rss []appsv1.ReplicaSet, pods []corev1.Pod, o rollout.Options) rollout.Verdict {
			d = d.DeepCopy()
			d.Status.TerminatingReplicas = nil
			return rollout.Assess(d, rss, activePods(pods), o)
		}), ignoreTerminatingKinds)},
	Description: "the pod list without terminating pods, and no terminatingReplicas (every workload kind)",
}

// TwoTransitions takes a second decision in the same reconcile, on the
// state it assumes its first one produced: after writing an image it
// re-decides with that component "at the target" but with the rollout
// verdict read before the write — so a dependent is moved to Upgrading
// (v1alpha1: UpgradingAPI) one pass early, on a rollout never observed.
var TwoTransitions = Mutant{
	Policy: cluster.Policy{Name: "two-transitions", Customize: func(r *controller.ApplicationUpgradeReconciler) {
		r.DecideFunc = twoSteps
	}},
	Description: "two transitions per reconcile, the second on the observation taken before the first's write",
}

func twoSteps(g appupgrade.Graph) appupgrade.Plan {
	first := appupgrade.Decide(g)
	if first.Phase.Terminal() || len(first.Writes) == 0 {
		return first
	}
	u := g.Upgrade.DeepCopy()
	u.Status.Phase, u.Status.ObservedGeneration = first.Phase, u.Generation
	u.Status.Components = nil
	for _, c := range first.Components {
		u.Status.Components = append(u.Status.Components, v1beta1.ComponentStatus{Name: c.Name, Wave: c.Wave, Phase: c.Phase})
	}
	next := appupgrade.Graph{Upgrade: u, ClaimedBy: g.ClaimedBy, ClaimedDeployment: g.ClaimedDeployment, Components: append([]appupgrade.Component(nil), g.Components...)}
	for _, w := range first.Writes {
		for i := range next.Components {
			if next.Components[i].Spec.Name == w.Component {
				next.Components[i].Image = w.Image
			}
		}
	}
	second := appupgrade.Decide(next)
	second.Writes = first.Writes // at most one write per component: the first decision's
	return second
}

// ProductWithoutObservedGeneration is the product's four-part rule with
// its first part removed. The ReplicaSet lookup (no ReplicaSet matches a
// template the controller has not seen) and the pod list still stop it, so
// it is safe in C01–C04 and the @mutants graph scenarios; the checks must not flag it.
var ProductWithoutObservedGeneration = Mutant{
	Policy: cluster.Policy{Name: "product-without-observed-generation", Customize: assessWith(
		func(d *appsv1.Deployment, rss []appsv1.ReplicaSet, pods []corev1.Pod, o rollout.Options) rollout.Verdict {
			return rollout.Assess(observed(d), rss, pods, o)
		})},
	Description: "the product rule without the observedGeneration check (masked by the ReplicaSet and pod checks)",
	Equivalent:  true,
}

// AnyDependency writes a component once ANY of its dependencies is rolled
// out instead of ALL: a component with several dependencies is decided as
// if it depended only on those already Rolled (all of them while none
// is). Only a graph with a fan-in (the diamond) can tell it from the
// product; on a chain it is the product.
var AnyDependency = Mutant{
	Policy: cluster.Policy{Name: "any-dependency", Customize: func(r *controller.ApplicationUpgradeReconciler) {
		r.DecideFunc = anyDependency
	}},
	Description: "a dependent written when any one dependency is rolled out instead of every one",
}

func anyDependency(g appupgrade.Graph) appupgrade.Plan {
	u := g.Upgrade.DeepCopy()
	rolled := map[string]bool{}
	for _, c := range u.Status.Components {
		rolled[c.Name] = c.Phase == v1beta1.ComponentRolled
	}
	weakened := map[string][]string{}
	for i := range u.Spec.Components {
		c := &u.Spec.Components[i]
		var some []string
		for _, d := range c.DependsOn {
			if rolled[d] {
				some = append(some, d)
			}
		}
		if len(some) > 0 && len(some) < len(c.DependsOn) {
			c.DependsOn = some
			weakened[c.Name] = some
		}
	}
	next := appupgrade.Graph{Upgrade: u, ClaimedBy: g.ClaimedBy, ClaimedDeployment: g.ClaimedDeployment, Components: append([]appupgrade.Component(nil), g.Components...)}
	for i := range next.Components {
		if deps, ok := weakened[next.Components[i].Spec.Name]; ok {
			next.Components[i].Spec.DependsOn = deps
		}
	}
	return appupgrade.Decide(next)
}

// EarlyCompleted claims a component no other depends on Rolled as soon as
// its image is written (RollingOut → Rolled), and the upgrade Completed
// once every component is so claimed: every write is in order and only
// the claims are early, so the event log's ordering cannot see it; the
// one judge must, from the recorded status patches (porcupine's phase
// claims).
var EarlyCompleted = Mutant{
	Policy: cluster.Policy{Name: "early-completed", Customize: func(r *controller.ApplicationUpgradeReconciler) {
		r.DecideFunc = earlyCompleted
	}},
	Description: "the last components claimed Rolled, and the upgrade Completed, as soon as their images are written",
}

func earlyCompleted(g appupgrade.Graph) appupgrade.Plan {
	p := appupgrade.Decide(g)
	if len(p.Writes) > 0 || p.Phase.Terminal() {
		return p
	}
	depended := map[string]bool{}
	for _, c := range g.Upgrade.Spec.Components {
		for _, d := range c.DependsOn {
			depended[d] = true
		}
	}
	rolled := 0
	for i := range p.Components {
		c := &p.Components[i]
		if c.Phase == v1beta1.ComponentRollingOut && !depended[c.Name] {
			c.Phase, c.Reason = v1beta1.ComponentRolled, appupgrade.ReasonCompleted
		}
		if c.Phase == v1beta1.ComponentRolled {
			rolled++
		}
	}
	if rolled == len(p.Components) {
		p.Phase, p.Reason, p.Message = v1beta1.PhaseCompleted, appupgrade.ReasonCompleted, "Upgrade completed (early: mutant)"
	}
	return p
}

// NoLeaseGuard trusts the leader elector alone, as the operator did
// before manager.LeaseGuard: its LeaseHeld always answers nil, so a
// leader paused past its lease writes on resume until client-go's elector
// notices the loss at its next renew attempt, up to a renew deadline
// later (C10 on the local control plane). Only the fault pause shows it.
var NoLeaseGuard = Mutant{
	Policy: cluster.Policy{Name: "no-lease-guard", Customize: func(r *controller.ApplicationUpgradeReconciler) {
		r.LeaseHeld = func() error { return nil }
	}},
	Description: "no lease guard: the reconciler writes whenever its elector believes it leads, however old its last renewal of the Lease",
}
