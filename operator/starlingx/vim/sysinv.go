package vim

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
)

// KubeVersion is sysinv's /v1/kube_versions/{version}
// (api/controllers/v1/kube_version.py).
type KubeVersion struct {
	Version          string   `json:"version"`
	UpgradeFrom      []string `json:"upgrade_from"`
	DowngradeTo      []string `json:"downgrade_to"`
	AppliedPatches   []string `json:"applied_patches"`
	AvailablePatches []string `json:"available_patches"`
	Target           bool     `json:"target"`
	State            string   `json:"state"` // active, available, partial, unavailable
}

// KubeUpgrade is sysinv's kube_upgrade (api/controllers/v1/kube_upgrade.py).
type KubeUpgrade struct {
	UUID        string `json:"uuid"`
	FromVersion string `json:"from_version"`
	ToVersion   string `json:"to_version"`
	State       string `json:"state"` // upgrade-started … upgrading-kubelets, upgrade-complete, upgrade-aborted, …
}

// System is sysinv's isystem (api/controllers/v1/system.py).
type System struct {
	UUID            string `json:"uuid"`
	Name            string `json:"name"`
	SystemType      string `json:"system_type"` // All-in-one, Standard
	SystemMode      string `json:"system_mode"` // simplex, duplex, duplex-direct
	SoftwareVersion string `json:"software_version"`
}

// Host is sysinv's ihost, the fields the operator reads.
// Capabilities["Personality"] is "Controller-Active" on the active controller.
type Host struct {
	UUID           string         `json:"uuid"`
	Hostname       string         `json:"hostname"`
	Personality    string         `json:"personality"`
	Subfunctions   string         `json:"subfunctions"`
	Administrative string         `json:"administrative"`
	Operational    string         `json:"operational"`
	Availability   string         `json:"availability"`
	Capabilities   map[string]any `json:"capabilities"`
}

// ActiveController reports whether h is the active controller.
func (h Host) ActiveController() bool { return h.Capabilities["Personality"] == "Controller-Active" }

// ListKubeVersions lists /v1/kube_versions (version, target, state only)
// and shows each version for upgrade_from and the patch lists.
func (c *HTTPClient) ListKubeVersions(ctx context.Context) ([]KubeVersion, error) {
	var list struct {
		KubeVersions []KubeVersion `json:"kube_versions"`
	}
	if err := c.call(ctx, request{service: "sysinv", op: "list kubernetes versions", method: http.MethodGet, path: "/v1/kube_versions", out: &list}); err != nil {
		return nil, err
	}
	out := make([]KubeVersion, 0, len(list.KubeVersions))
	for _, k := range list.KubeVersions {
		var full KubeVersion
		req := request{service: "sysinv", op: "show kubernetes version " + k.Version, method: http.MethodGet,
			path: "/v1/kube_versions/" + url.PathEscape(k.Version), out: &full}
		if err := c.call(ctx, req); err != nil {
			return nil, err
		}
		out = append(out, full)
	}
	return out, nil
}

// ListKubeUpgrades is GET /v1/kube_upgrade.
func (c *HTTPClient) ListKubeUpgrades(ctx context.Context) ([]KubeUpgrade, error) {
	var list struct {
		KubeUpgrades []KubeUpgrade `json:"kube_upgrades"`
	}
	err := c.call(ctx, request{service: "sysinv", op: "list kubernetes upgrades", method: http.MethodGet, path: "/v1/kube_upgrade", out: &list})
	return list.KubeUpgrades, err
}

// GetSystem is GET /v1/isystems (one system).
func (c *HTTPClient) GetSystem(ctx context.Context) (*System, error) {
	var list struct {
		ISystems []System `json:"isystems"`
	}
	req := request{service: "sysinv", op: "get the system", method: http.MethodGet, path: "/v1/isystems", out: &list}
	if err := c.call(ctx, req); err != nil {
		return nil, err
	}
	if len(list.ISystems) == 0 {
		return nil, &Error{Service: "sysinv", Op: req.op, Method: req.method, Path: req.path, StatusCode: http.StatusNotFound, FaultString: "no isystem"}
	}
	return &list.ISystems[0], nil
}

// ListHosts is GET /v1/ihosts.
func (c *HTTPClient) ListHosts(ctx context.Context) ([]Host, error) {
	var list struct {
		IHosts []Host `json:"ihosts"`
	}
	err := c.call(ctx, request{service: "sysinv", op: "list hosts", method: http.MethodGet, path: "/v1/ihosts", out: &list})
	return list.IHosts, err
}

// SwactHost is PATCH /v1/ihosts/{uuid} [{"op":"replace","path":"/action","value":"swact"}]
// on the named (active) controller.
func (c *HTTPClient) SwactHost(ctx context.Context, hostname string) error {
	hosts, err := c.ListHosts(ctx)
	if err != nil {
		return err
	}
	op := "swact host " + hostname
	for _, h := range hosts {
		if h.Hostname == hostname {
			patch := []map[string]string{{"op": "replace", "path": "/action", "value": "swact"}}
			return c.call(ctx, request{service: "sysinv", op: op, method: http.MethodPatch, path: "/v1/ihosts/" + h.UUID, body: patch})
		}
	}
	return &Error{Service: "sysinv", Op: op, Method: http.MethodPatch, Path: "/v1/ihosts", StatusCode: http.StatusNotFound,
		FaultString: fmt.Sprintf("host %s not found", hostname)}
}
