// NewSim and Install (formerly package simapi) build simulations that
// serve the operator's APIs as a cluster with the operator's CRDs installed
// does: every type of
// manager.NewScheme, and ApplicationUpgrade stored once at its storage
// version (v1beta1) and converted to and from v1alpha1 by the API types'
// own conversion (v1alpha1 is conversion.Convertible against the v1beta1
// hub) — what the conversion webhook does on a real API server.

package simrun

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	upgradesv1beta1 "github.com/lunadas/upgrade-operator/operator/api/upgrades/v1beta1"
	"github.com/lunadas/upgrade-operator/operator/manager"
	"github.com/lunadas/upgrade-operator/simulator"
)

var sharedScheme = sync.OnceValue(manager.NewScheme)

// ApplicationUpgradeKind is the group and kind served at several versions.
var ApplicationUpgradeKind = schema.GroupKind{Group: upgradesv1beta1.GroupVersion.Group, Kind: "ApplicationUpgrade"}

// StorageVersion is the version ApplicationUpgrades are stored at, as the
// CRD's `storage: true` version (deploy/crd/bases).
const StorageVersion = "v1beta1"

// NewSim returns simulator.New(opts) with opts.Scheme defaulting to
// manager.NewScheme() and the operator's conversions installed (Install).
// The default scheme is built once per process and shared by every
// simulation: nothing registers types in it after it is built, and a
// scheme is safe for concurrent reads.
func NewSim(opts simulator.Options) *simulator.Sim {
	if opts.Scheme == nil {
		opts.Scheme = sharedScheme()
	}
	sim := simulator.New(opts)
	Install(sim)
	return sim
}

// Install makes ApplicationUpgrade a multi-version kind of sim, stored at
// StorageVersion and converted in process through the scheme's hub and
// spokes (simulator.HubConversion). sim's scheme must hold v1alpha1 and
// v1beta1 (manager.NewScheme does); call it before creating any
// ApplicationUpgrade. It panics if the storage version is not in the scheme.
func Install(sim *simulator.Sim) {
	sim.SetConversion(ApplicationUpgradeKind, StorageVersion, simulator.HubConversion(sim.Scheme()))
}
