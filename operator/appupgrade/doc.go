// Package appupgrade is the pure decision layer of the ApplicationUpgrade
// controller: from the component graph as observed in the cluster, Decide
// returns the phase of the upgrade and of every component and the image
// writes to perform in this pass. It holds no client and no clock.
package appupgrade

import "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"

// Reasons shared by the decision's phases, conditions and events.
const (
	ReasonSpecChanged = "SpecChanged"
	ReasonConfigError = "ConfigurationError"
	ReasonCompleted   = "Completed"
	// ReasonImageReverted: a component's Deployment no longer carries the
	// image the operator wrote; reported, not re-written (docs/gitops.md).
	ReasonImageReverted     = "ImageReverted"
	ReasonDeploymentClaimed = "DeploymentClaimed"
	ReasonWriteNotObserved  = "WriteNotObservedYet"
)

// ImageWrite is one write a plan asks for: set Container's image in the
// pod template of Workload (a Deployment, StatefulSet or DaemonSet) to
// Image, for component Component.
type ImageWrite struct {
	Component string
	Workload  v1beta1.WorkloadKey
	Container string
	Image     string
}
