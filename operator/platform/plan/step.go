// Package plan computes the multi-step deployment from the running
// composite release to spec.release: a list of sw-deploy and kube-upgrade
// steps, each with its reason. It is pure: no clients, no clock; the
// controller executes the steps one at a time and replans on every
// reconcile. See docs/platform-plan.md.
package plan

import (
	"github.com/lunadas/upgrade-operator/operator/platform/release"
)

// Kind is which VIM strategy runs a step.
type Kind string

// The step kinds.
const (
	// SwDeploy deploys a product release (VIM sw-upgrade strategy, the CLI's sw-deploy-strategy).
	SwDeploy Kind = "sw-deploy"
	// KubeUpgrade upgrades Kubernetes (VIM kube-upgrade strategy).
	KubeUpgrade Kind = "kube-upgrade"
)

// DeployStep is one planned step: a sw-deploy of Release or a
// kube-upgrade to Kube, with the reason the plan needs it.
type DeployStep struct {
	Kind    Kind
	Release release.ID          // target of a sw-deploy step
	Kube    release.KubeVersion // target of a kube-upgrade step
	Reason  string
	// Check says what the real system checks only when the step starts,
	// because nothing it exposes before can tell ("" when the plan checked
	// everything): e.g. the USM deploy precheck reading the new release's
	// feed for its Kubernetes versions.
	Check string
}

// Target is the step's target: a release id or a Kubernetes version.
func (s DeployStep) Target() string {
	if s.Kind == KubeUpgrade {
		return s.Kube.String()
	}
	return s.Release.String()
}

// String is "sw-deploy(starlingx-13.01.2)" or "kube-upgrade(v1.34.1)".
func (s DeployStep) String() string { return string(s.Kind) + "(" + s.Target() + ")" }

// Apply is the composite release the system runs once the step is done.
func (s DeployStep) Apply(c release.Composite) release.Composite {
	if s.Kind == KubeUpgrade {
		c.Kubernetes = s.Kube
	} else {
		c.Platform = s.Release
	}
	return c
}

// SystemMode is sysinv's system_mode; it decides how far one kube-upgrade
// step may go.
type SystemMode string

// The system modes. An empty mode is treated as duplex (the cautious choice).
const (
	Simplex      SystemMode = "simplex"
	Duplex       SystemMode = "duplex"
	DuplexDirect SystemMode = "duplex-direct"
)

// OneMinorPerStep reports whether Kubernetes must go up one minor version
// per kube-upgrade step: true on every mode but simplex (AIO-SX), which can
// jump several minor versions in one strategy.
func (m SystemMode) OneMinorPerStep() bool { return m != Simplex }
