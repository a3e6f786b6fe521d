package vim

import (
	"context"
	"net/http"
	"sync"
)

// Client is everything the Upgrade controller asks of a StarlingX system.
// The HTTP implementation is *HTTPClient; the simulator implements it over
// its system model.
type Client interface {
	VIM
	USM
	Sysinv
}

// VIM is the nfv-vim orchestration API (/api/orchestration). The VIM holds
// at most one strategy of any type.
type VIM interface {
	// GetStrategy returns the strategy of type t, or nil (and no error)
	// when the VIM holds none of that type.
	GetStrategy(ctx context.Context, t StrategyType) (*Strategy, error)
	// GetStrategyByUUID returns one strategy; IsNotFound when it is gone.
	GetStrategyByUUID(ctx context.Context, t StrategyType, uuid string) (*Strategy, error)
	// CreateSwUpgradeStrategy creates (and starts building) a sw-upgrade
	// strategy; IsConflict when a strategy exists, IsBadRequest when refused.
	CreateSwUpgradeStrategy(ctx context.Context, req SwUpgradeRequest) (*Strategy, error)
	// CreateKubeUpgradeStrategy creates a kube-upgrade strategy.
	CreateKubeUpgradeStrategy(ctx context.Context, req KubeUpgradeRequest) (*Strategy, error)
	// ApplyStrategy is apply-all (stageID nil) or apply-stage. A non-empty
	// uuid must name the current strategy of type t, else IsNotFound
	// ("strategy does not exist") and nothing is sent.
	ApplyStrategy(ctx context.Context, t StrategyType, uuid string, stageID *int) (*Strategy, error)
	// AbortStrategy is abort (stageID nil) or abort-stage, uuid as above.
	AbortStrategy(ctx context.Context, t StrategyType, uuid string, stageID *int) (*Strategy, error)
	// DeleteStrategy deletes the strategy of type t, uuid as above;
	// IsConflict while building / applying / aborting unless force,
	// IsNotFound when none exists.
	DeleteStrategy(ctx context.Context, t StrategyType, uuid string, force bool) error
	// CurrentStrategy is the name and state of whichever strategy exists,
	// or nil.
	CurrentStrategy(ctx context.Context) (*CurrentStrategy, error)
}

// USM is the software (USM) API.
type USM interface {
	// ListReleases is GET /v1/release with the optional filters.
	ListReleases(ctx context.Context, q ReleaseQuery) ([]Release, error)
	// GetRelease is GET /v1/release/{id}; IsNotFound when not uploaded.
	GetRelease(ctx context.Context, id string) (*Release, error)
	// ListDeploys is GET /v1/deploy: none, or the deploy in progress.
	ListDeploys(ctx context.Context) ([]Deploy, error)
}

// Sysinv is the platform (sysinv) API.
type Sysinv interface {
	// ListKubeVersions lists the Kubernetes versions with their details
	// (the list answers version/target/state only, so each is shown too).
	ListKubeVersions(ctx context.Context) ([]KubeVersion, error)
	// ListKubeUpgrades is GET /v1/kube_upgrade: none, or the one in progress.
	ListKubeUpgrades(ctx context.Context) ([]KubeUpgrade, error)
	// GetSystem is the isystem (mode, type, software version).
	GetSystem(ctx context.Context) (*System, error)
	// ListHosts is GET /v1/ihosts.
	ListHosts(ctx context.Context) ([]Host, error)
	// SwactHost swacts away from the named active controller.
	SwactHost(ctx context.Context, hostname string) error
}

// HTTPClient talks to a real (or fake) StarlingX system over HTTP. Safe
// for concurrent use.
type HTTPClient struct {
	cfg      Config
	http     *http.Client
	explicit map[string]string
	secrets  *secretSet

	tokMu sync.Mutex
	tok   *token
}

var _ Client = (*HTTPClient)(nil)

// New returns a client for cfg. It does not contact the system.
func New(cfg Config) (*HTTPClient, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	rt := cfg.Transport
	if rt == nil {
		t, err := newTransport(cfg.TLS)
		if err != nil {
			return nil, err
		}
		rt = t
	}
	c := &HTTPClient{cfg: cfg, http: &http.Client{Transport: instrument(rt)}, secrets: &secretSet{}}
	c.secrets.add(cfg.Credentials.Password.reveal())
	c.explicit = map[string]string{}
	for svc, u := range map[string]string{"vim": cfg.Endpoints.VIM, "usm": cfg.Endpoints.USM, "sysinv": cfg.Endpoints.Sysinv} {
		if u != "" {
			c.explicit[svc] = stripVersion(u)
		}
	}
	return c, nil
}
