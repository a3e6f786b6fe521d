package controller

import (
	"slices"

	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/appupgrade"
)

// Event and condition reasons. A graph upgrade uses the generic ones; an
// upgrade of the v1alpha1 shape (legacyShape) keeps the reasons v1alpha1
// users, scripts and dashboards already match on.
const (
	// ReasonImageWritten: an image was written (event, any graph).
	ReasonImageWritten = appupgrade.ReasonImageWritten
	// ReasonComponentRolledOut: a component rolled out, every old pod gone (event).
	ReasonComponentRolledOut = appupgrade.ReasonRolledOut

	// ReasonWorkerPatched, ReasonAPIPatched: v1alpha1's image-write events.
	ReasonWorkerPatched = "WorkerPatched"
	ReasonAPIPatched    = "APIPatched"
	// ReasonWorkerRolledOut: v1alpha1's event when the worker rolled out.
	ReasonWorkerRolledOut = "WorkerRolledOut"
	// ReasonWorkerRolloutFailed, ReasonAPIRolloutFailed: v1alpha1's
	// condition reasons of a failed rollout.
	ReasonWorkerRolloutFailed = "WorkerRolloutFailed"
	ReasonAPIRolloutFailed    = "APIRolloutFailed"
)

const (
	legacyWorker = v1alpha1.WorkerComponent
	legacyAPI    = v1alpha1.APIComponent
)

// legacyShape reports whether u is what a v1alpha1 object converts to:
// exactly the components "worker" (no dependencies) and "api" (depending on
// the worker), both Deployments named by deploymentRef in u's namespace. Such an upgrade keeps v1alpha1's
// event reasons (WorkerPatched, WorkerRolledOut, APIPatched) and failure
// reasons (WorkerRolloutFailed, APIRolloutFailed), whichever API version
// it was created through.
func legacyShape(u *v1beta1.ApplicationUpgrade) bool {
	cs := u.Spec.Components
	if len(cs) != 2 {
		return false
	}
	w, a := cs[0], cs[1]
	if w.Name != legacyWorker {
		w, a = a, w
	}
	return w.Name == legacyWorker && a.Name == legacyAPI && len(w.DependsOn) == 0 &&
		slices.Equal(a.DependsOn, []string{legacyWorker}) &&
		w.WorkloadRef == nil && a.WorkloadRef == nil && w.DeploymentRef.Namespace == "" && a.DeploymentRef.Namespace == ""
}

// writeReason is the event reason of an image write of component.
func writeReason(g appupgrade.Graph, component string) string {
	if !legacyShape(g.Upgrade) {
		return ReasonImageWritten
	}
	if component == legacyAPI {
		return ReasonAPIPatched
	}
	return ReasonWorkerPatched
}

// apiKey is namespace/name of the API Deployment of a legacy-shaped upgrade.
func apiKey(u *v1beta1.ApplicationUpgrade) string {
	for _, c := range u.Spec.Components {
		if c.Name == legacyAPI {
			return c.WorkloadNamespace(u.Namespace) + "/" + c.WorkloadName()
		}
	}
	return ""
}
