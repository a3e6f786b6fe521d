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
	// ProductDeployedPartial: some of a componentized release's parts are
	// deployed (states.py DEPLOYED_PARTIAL); it is not the running release.
	ProductDeployedPartial ProductState = "deployed-partial"
	// ProductNoState: USM reported the release without a state.
	ProductNoState ProductState = ""
)

// Deployable reports whether a plan may target a release in this state:
// available, or already deploying / deployed-partial / deployed / committed.
func (s ProductState) Deployable() bool {
	switch s {
	case ProductAvailable, ProductDeploying, ProductDeployedPartial, ProductDeployed, ProductCommitted:
		return true
	}
	return false
}

// Product is one uploaded product release, as USM's GET /v1/release
// shows it. USM's release records carry no Kubernetes versions: which
// versions a release runs is known from sysinv's kube_versions once it
// runs, and from its feed only inside the deploy precheck (see Catalog).
type Product struct {
	ID    ID
	State ProductState
	// Requires are releases that must be deployed first (USM's requires).
	Requires []ID
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
//
// Kubes is sysinv's GET /v1/kube_versions, which lists the versions the
// running product release installed under /usr/local/kubernetes
// (starlingx/config sysinv/common/kubernetes.py get_kube_versions,
// get_installed_kube_versions) with their states
// (KubeOperator.kube_get_version_states). It says nothing about another
// release: a newer patch may install more versions, and a new major's
// versions are read from its feed only by the USM deploy precheck
// (starlingx/update software/scripts/deploy-precheck
// _get_supported_k8s_versions, _check_kube_version). KubesOf is the
// product release Kubes describes (the running one).
type Catalog struct {
	Products []Product
	Kubes    []Kube
	KubesOf  ID
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
