// Package appupgrade is the pure decision layer of the ApplicationUpgrade
// controller: from what was observed in the cluster it returns the one next
// step (at most one image write and one phase transition). It holds no client
// and no clock.
package appupgrade

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	upgradesv1alpha1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1alpha1"
	"github.com/lunadas/upgrade-operator/operator/rollout"
)

// Component names used in messages, events and writes.
const (
	Worker = "worker"
	API    = "api"
)

// Observed is one component as the reconciler found it.
type Observed struct {
	// Name is Worker or API.
	Name string
	// Spec is the component's desired state from the ApplicationUpgrade.
	Spec upgradesv1alpha1.ComponentSpec
	// Key is the Deployment's namespace/name.
	Key types.NamespacedName
	// Deployment is nil when ConfigError is set by a failed lookup.
	Deployment *appsv1.Deployment
	// Container is the resolved container name (Spec.ContainerName or the only container).
	Container string
	// Image is the image of Container in the Deployment's pod template.
	Image string
	// ConfigError is a terminal configuration problem: the Deployment does not
	// exist, the container is ambiguous or unknown, or the namespace is not
	// watched. Retrying cannot fix it; a spec change can.
	ConfigError error
	// Rollout is the assessment of the Deployment (rollout.Assess).
	Rollout rollout.Verdict
}

// AtTarget reports whether the Deployment's template already carries the desired image.
func (o Observed) AtTarget() bool { return o.ConfigError == nil && o.Image == o.Spec.Image }

// State is the input of Next: the upgrade object and both components.
type State struct {
	Upgrade *upgradesv1alpha1.ApplicationUpgrade
	Worker  Observed
	API     Observed
	// ClaimedBy names (namespace/name) an older, unfinished ApplicationUpgrade
	// that references the same worker or API Deployment; while set, this one
	// holds without writing, so two upgrades never fight over a Deployment.
	ClaimedBy string
}

// ImageWrite is the single write a step may ask for: set Container's image in
// the pod template of Deployment to Image.
type ImageWrite struct {
	Component  string
	Deployment types.NamespacedName
	Container  string
	Image      string
}

// Step is the decision of one reconcile.
type Step struct {
	// Phase is the phase to record; equal to the current one when nothing moves.
	Phase upgradesv1alpha1.Phase
	// Reason is a CamelCase reason for conditions and events.
	Reason string
	// Message is the human-readable status message.
	Message string
	// Write is the image write to perform before recording Phase, or nil.
	Write *ImageWrite
}
