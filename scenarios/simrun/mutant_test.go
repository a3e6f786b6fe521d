package simrun

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
	"github.com/lunadas/upgrade-operator/operator/controller"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// countersOnly replaces the readiness rule by `kubectl rollout status`'s:
// counters and observedGeneration, no pod list, no terminatingReplicas.
func countersOnly(r *controller.ApplicationUpgradeReconciler) {
	r.AssessFunc = func(d *appsv1.Deployment, rss []appsv1.ReplicaSet, pods []corev1.Pod, o rollout.Options) rollout.Verdict {
		d = d.DeepCopy()
		d.Status.TerminatingReplicas = nil
		v := rollout.Assess(d, rss, nil, o)
		if v.Reason == rollout.ReasonNewPodsNotCreated {
			return rollout.Verdict{State: rollout.Rolled, Reason: rollout.ReasonRolled, Message: "counters complete"}
		}
		return v
	}
}

// anyDependency decides a component with several dependencies as if it
// depended only on those already Rolled (scenarios/mutants.AnyDependency,
// which imports this package): in the diamond, api is written once the
// faster of worker and indexer is rolled out.
func anyDependency(r *controller.ApplicationUpgradeReconciler) {
	r.DecideFunc = func(g appupgrade.Graph) appupgrade.Plan {
		rolled := map[string]bool{}
		for _, c := range g.Upgrade.Status.Components {
			rolled[c.Name] = c.Phase == v1beta1.ComponentRolled
		}
		next := appupgrade.Graph{Upgrade: g.Upgrade.DeepCopy(), ClaimedBy: g.ClaimedBy, Components: append([]appupgrade.Component(nil), g.Components...)}
		weaken := func(deps []string) []string {
			var some []string
			for _, d := range deps {
				if rolled[d] {
					some = append(some, d)
				}
			}
			if len(some) == 0 {
				return deps
			}
			return some
		}
		for i := range next.Upgrade.Spec.Components {
			c := &next.Upgrade.Spec.Components[i]
			c.DependsOn = weaken(c.DependsOn)
		}
		for i := range next.Components {
			next.Components[i].Spec.DependsOn = weaken(next.Components[i].Spec.DependsOn)
		}
		return appupgrade.Decide(next)
	}
}
