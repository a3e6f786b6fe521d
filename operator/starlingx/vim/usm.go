package vim

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
)

// Release is one release from GET /v1/release (software release_data.py
// to_query_dict; api-ref-usm-v1-update.rst). SwVersion is "MM.mm.P".
// A release record names no Kubernetes versions: sysinv's kube_versions
// list the running release's, and the deploy precheck reads a new
// release's from its feed (see operator/platform/plan).
type Release struct {
	ReleaseID            string   `json:"release_id"`
	State                string   `json:"state"` // uploading, upload-failed, available, unavailable, deploying, deployed, removing, committed, deployed-partial; null/"" for none
	SwVersion            string   `json:"sw_version"`
	Component            string   `json:"component"`
	Status               string   `json:"status"`
	Unremovable          bool     `json:"unremovable"`
	Summary              string   `json:"summary"`
	Description          string   `json:"description"`
	InstallInstructions  string   `json:"install_instructions"`
	Warnings             string   `json:"warnings"`
	RebootRequired       bool     `json:"reboot_required"`
	PrepatchedISO        bool     `json:"prepatched_iso"`
	Requires             []string `json:"requires"`
	Packages             []string `json:"packages"`
}

// ReleaseQuery filters GET /v1/release. USM applies Show (a state) before
// Release, and Release matches every release whose major "MM.mm" appears
// in it (software_controller.py software_release_query_cached), so
// Release "starlingx-13.01.2" lists the whole 13.01 major.
type ReleaseQuery struct {
	Show    string // a release state
	Release string
}

// Deploy is USM's deploy record (GET /v1/deploy). Releases are "MM.mm.P".
type Deploy struct {
	FromRelease    string `json:"from_release"`
	ToRelease      string `json:"to_release"`
	FeedRepo       string `json:"feed_repo"`
	CommitID       string `json:"commit_id"`
	RebootRequired bool   `json:"reboot_required"`
	State          string `json:"state"` // start, start-done, start-failed, host, host-done, host-failed, activate, activate-done, activate-failed, ..., completed
}

// ListReleases is GET /v1/release[?show=&release=].
func (c *HTTPClient) ListReleases(ctx context.Context, q ReleaseQuery) ([]Release, error) {
	v := url.Values{}
	if q.Show != "" {
		v.Set("show", q.Show)
	}
	if q.Release != "" {
		v.Set("release", q.Release)
	}
	var out []Release
	err := c.call(ctx, request{service: "usm", op: "list software releases", method: http.MethodGet, path: "/v1/release", query: v, out: &out})
	return out, err
}

// GetRelease is GET /v1/release/{id}.
func (c *HTTPClient) GetRelease(ctx context.Context, id string) (*Release, error) {
	var out Release
	err := c.call(ctx, request{service: "usm", op: "get software release " + id, method: http.MethodGet,
		path: "/v1/release/" + url.PathEscape(id), out: &out})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ListDeploys is GET /v1/deploy. USM answers a list (or an object, or
// null when none); all decode.
func (c *HTTPClient) ListDeploys(ctx context.Context) ([]Deploy, error) {
	var raw json.RawMessage
	req := request{service: "usm", op: "get the software deploy", method: http.MethodGet, path: "/v1/deploy", out: &raw}
	if err := c.call(ctx, req); err != nil {
		return nil, err
	}
	var list []Deploy
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var one Deploy
	if err := json.Unmarshal(raw, &one); err != nil {
		return nil, &Error{Service: "usm", Op: req.op, Method: req.method, Path: req.path, StatusCode: 200,
			FaultString: "cannot decode the deploy: want a list or an object"}
	}
	if one.ToRelease == "" {
		return nil, nil
	}
	return []Deploy{one}, nil
}
