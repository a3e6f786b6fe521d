package platformsim

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/lunadas/upgrade-operator/operator/starlingx/vim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// ListReleases implements vim.USM with USM's filters (show first, then
// release matching the major).
func (c *Client) ListReleases(_ context.Context, q vim.ReleaseQuery) ([]vim.Release, error) {
	out := []vim.Release{}
	valid := map[string]bool{"available": true, "unavailable": true, "deployed": true, "removing": true, "committed": true, "deploying": true}
	c.with(func(m *starlingx.System, now time.Time) {
		for _, r := range m.Releases(now) {
			if valid[q.Show] && r.State != q.Show {
				continue
			}
			if !valid[q.Show] && q.Release != "" && !strings.Contains(q.Release, major(r.SwVersion())) {
				continue
			}
			out = append(out, toRelease(r))
		}
	})
	return out, nil
}

func major(sw string) string {
	p := strings.Split(sw, ".")
	if len(p) < 2 {
		return sw
	}
	return p[0] + "." + p[1]
}

// GetRelease implements vim.USM.
func (c *Client) GetRelease(_ context.Context, id string) (*vim.Release, error) {
	var out *vim.Release
	c.with(func(m *starlingx.System, now time.Time) {
		if r, ok := m.Release(now, id); ok {
			v := toRelease(r)
			out = &v
		}
	})
	if out == nil {
		return nil, &vim.Error{Service: "usm", Op: "get software release " + id, Method: http.MethodGet, Path: "/v1/release/" + id,
			StatusCode: http.StatusNotFound, FaultString: "Release " + id + " not found"}
	}
	return out, nil
}

func toRelease(r starlingx.Release) vim.Release {
	return vim.Release{ReleaseID: r.ID, State: r.State, SwVersion: r.SwVersion(), Component: r.Component, Status: r.Status,
		Unremovable: r.Unremovable, Summary: r.Summary, Description: r.Description, InstallInstructions: r.InstallInstructions,
		Warnings: r.Warnings, RebootRequired: r.RebootRequired, PrepatchedISO: r.PrepatchedISO, Requires: nonNil(r.Requires),
		Packages: nonNil(r.Packages)}
}

// ListDeploys implements vim.USM.
func (c *Client) ListDeploys(_ context.Context) ([]vim.Deploy, error) {
	out := []vim.Deploy{}
	c.with(func(m *starlingx.System, now time.Time) {
		for _, d := range m.Deploys(now) {
			out = append(out, vim.Deploy{FromRelease: d.FromRelease, ToRelease: d.ToRelease, FeedRepo: d.FeedRepo,
				CommitID: d.CommitID, RebootRequired: d.RebootRequired, State: d.State})
		}
	})
	return out, nil
}
