package release

// ProductState is USM's release state (GET /v1/release).
type ProductState string

// USM's release states.
const (
	ProductUploading    ProductState = "uploading"
	ProductUploadFailed ProductState = "upload-failed"
	ProductAvailable    ProductState = "available"
	ProductUnavailable  ProductState = "unavailable"
	ProductDeploying    ProductState = "deploying"
	ProductDeployed     ProductState = "deployed"
	ProductRemoving     ProductState = "removing"
	ProductCommitted    ProductState = "committed"
)

// Deployable reports whether a plan may target a release in this state:
// available, or already deploying / deployed / committed.
func (s ProductState) Deployable() bool {
	switch s {
	case ProductAvailable, ProductDeploying, ProductDeployed, ProductCommitted:
		return true
	}
	return false
}

// Product is one uploaded product release.
type Product struct {
	ID    ID
	State ProductState
	// Requires are releases that must be deployed first (USM's requires).
	Requires []ID
	// Kube are the Kubernetes versions this release supports.
	Kube []KubeVersion
}

// Supports reports whether the release can run Kubernetes version v.
func (p Product) Supports(v KubeVersion) bool {
	for _, k := range p.Kube {
		if k == v {
			return true
		}
	}
	return false
}

// KubeState is sysinv's Kubernetes version state (GET /v1/kube_versions).
type KubeState string

// sysinv's Kubernetes version states.
const (
	KubeActive      KubeState = "active"
	KubeAvailable   KubeState = "available"
	KubePartial     KubeState = "partial"
	KubeUnavailable KubeState = "unavailable"
)

// Usable reports whether a plan may target a version in this state
// (anything but unavailable).
func (s KubeState) Usable() bool {
	return s == KubeActive || s == KubeAvailable || s == KubePartial
}

// Kube is one Kubernetes version the system knows.
type Kube struct {
	Version KubeVersion
	State   KubeState
	// UpgradeFrom are the versions this one can be reached from in one
	// step; empty means sysinv gave no restriction.
	UpgradeFrom []KubeVersion
}

// UpgradableFrom reports whether v may be upgraded to k in one step, as
// far as k's upgrade_from list says.
func (k Kube) UpgradableFrom(v KubeVersion) bool {
	if len(k.UpgradeFrom) == 0 {
		return true
	}
	for _, f := range k.UpgradeFrom {
		if f == v {
			return true
		}
	}
	return false
}

// Catalog is what the system has uploaded: product releases (USM) and
// Kubernetes versions (sysinv). Lookups return the first match.
type Catalog struct {
	Products []Product
	Kubes    []Kube
}

// Product finds a product release by id (numeric match).
func (c Catalog) Product(id ID) (Product, bool) {
	for _, p := range c.Products {
		if p.ID.Equal(id) {
			return p, true
		}
	}
	return Product{}, false
}

// Kube finds a Kubernetes version.
func (c Catalog) Kube(v KubeVersion) (Kube, bool) {
	for _, k := range c.Kubes {
		if k.Version == v {
			return k, true
		}
	}
	return Kube{}, false
}

// HighestPatch is the highest deployable release of from's major release
// that is not below from; from itself when nothing higher is deployable.
func (c Catalog) HighestPatch(from ID) ID {
	best := from
	for _, p := range c.Products {
		if p.State.Deployable() && p.ID.SameMajor(from) && p.ID.Compare(best) > 0 {
			best = p.ID
		}
	}
	return best
}
