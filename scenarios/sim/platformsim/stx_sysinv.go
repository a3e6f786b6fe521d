package platformsim

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// ListKubeVersions implements vim.Sysinv.
func (c *Client) ListKubeVersions(_ context.Context) ([]vim.KubeVersion, error) {
	out := []vim.KubeVersion{}
	c.with(func(m *starlingx.System, now time.Time) {
		for _, k := range m.KubeVersions(now) {
			out = append(out, vim.KubeVersion{Version: k.Version, UpgradeFrom: nonNil(k.UpgradeFrom), DowngradeTo: nonNil(k.DowngradeTo),
				AppliedPatches: nonNil(k.AppliedPatches), AvailablePatches: nonNil(k.AvailablePatches), Target: k.Target, State: k.State})
		}
	})
	return out, nil
}

// ListKubeUpgrades implements vim.Sysinv.
func (c *Client) ListKubeUpgrades(_ context.Context) ([]vim.KubeUpgrade, error) {
	out := []vim.KubeUpgrade{}
	c.with(func(m *starlingx.System, now time.Time) {
		for _, u := range m.KubeUpgrades(now) {
			out = append(out, vim.KubeUpgrade{UUID: u.UUID, FromVersion: u.FromVersion, ToVersion: u.ToVersion, State: u.State})
		}
	})
	return out, nil
}

// GetSystem implements vim.Sysinv.
func (c *Client) GetSystem(_ context.Context) (*vim.System, error) {
	var out vim.System
	c.with(func(m *starlingx.System, now time.Time) {
		i := m.SystemInfo(now)
		out = vim.System{UUID: i.UUID, Name: i.Name, SystemType: i.SystemType, SystemMode: string(i.SystemMode), SoftwareVersion: i.SoftwareVersion}
	})
	return &out, nil
}

// ListHosts implements vim.Sysinv.
func (c *Client) ListHosts(_ context.Context) ([]vim.Host, error) {
	out := []vim.Host{}
	c.with(func(m *starlingx.System, now time.Time) {
		for _, h := range m.Hosts(now) {
			caps := map[string]any{}
			if p := h.ActivityCapability(); p != "" {
				caps["Personality"] = p
			}
			out = append(out, vim.Host{UUID: h.UUID, Hostname: h.Hostname, Personality: h.Personality, Subfunctions: h.Subfunctions,
				Administrative: h.Administrative, Operational: h.Operational, Availability: h.Availability, Capabilities: caps})
		}
	})
	return out, nil
}

// SwactHost implements vim.Sysinv.
func (c *Client) SwactHost(_ context.Context, hostname string) error {
	var err error
	c.with(func(m *starlingx.System, now time.Time) { err = m.Swact(now, hostname) })
	var e *starlingx.Error
	if errors.As(err, &e) {
		return &vim.Error{Service: "sysinv", Op: "swact host " + hostname, Method: http.MethodPatch, Path: "/v1/ihosts",
			StatusCode: e.Code, FaultString: e.Reason}
	}
	return err
}
