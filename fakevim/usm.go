package fakevim

import (
	"net/http"
	"strings"
	"time"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// USMHandler serves the USM software API: GET /v1/release[?show=&release=],
// GET /v1/release/{id} and GET /v1/deploy (starlingx/update
// software/api/controllers/v1).
func (s *Server) USMHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/release", s.listReleases)
	mux.HandleFunc("GET /v1/release/{id}", s.getRelease)
	mux.HandleFunc("GET /v1/deploy", s.listDeploys)
	return s.api("usm", mux)
}

// showStates are the states "show" accepts; another value is ignored
// (software_release_query_cached).
var showStates = map[string]bool{"available": true, "unavailable": true, "deployed": true, "removing": true,
	"committed": true, "deploying": true}

// listReleases filters as USM does: by "show" state when valid, else by
// "release", which keeps every release whose major "MM.mm" occurs in it.
func (s *Server) listReleases(w http.ResponseWriter, r *http.Request) {
	show, rel := r.URL.Query().Get("show"), r.URL.Query().Get("release")
	out := []map[string]any{}
	s.WithModel(func(m *starlingx.System, now time.Time) {
		for _, x := range m.Releases(now) {
			switch {
			case showStates[show]:
				if x.State != show {
					continue
				}
			case r.URL.Query().Has("release"):
				if !strings.Contains(rel, majorOf(x.SwVersion())) {
					continue
				}
			}
			out = append(out, releaseJSON(x))
		}
	})
	writeJSON(w, http.StatusOK, out)
}

func majorOf(swVersion string) string {
	parts := strings.Split(swVersion, ".")
	if len(parts) < 2 {
		return swVersion
	}
	return parts[0] + "." + parts[1]
}

func (s *Server) getRelease(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var x starlingx.Release
	var ok bool
	s.WithModel(func(m *starlingx.System, now time.Time) { x, ok = m.Release(now, id) })
	if !ok {
		writeUSMFault(w, http.StatusNotFound, "Release "+id+" not found")
		return
	}
	writeJSON(w, http.StatusOK, releaseJSON(x))
}

// releaseJSON is release_data.py to_query_dict: nothing more (the model's
// FeedKubeVersions is the release feed's content, which USM never serves).
func releaseJSON(x starlingx.Release) map[string]any {
	var component any
	if x.Component != "" {
		component = x.Component
	}
	return map[string]any{
		"release_id": x.ID, "state": x.State, "sw_version": x.SwVersion(), "component": component,
		"status": x.Status, "unremovable": x.Unremovable, "summary": x.Summary, "description": x.Description,
		"install_instructions": x.InstallInstructions, "warnings": x.Warnings, "reboot_required": x.RebootRequired,
		"prepatched_iso": x.PrepatchedISO, "preinstalled_patches": []string{}, "requires": nonNil(x.Requires),
		"activation_scripts": []string{}, "metapackages": map[string]any{}, "pre_upgrade_deploy": map[string]any{},
		"packages": nonNil(x.Packages),
	}
}

// listDeploys answers the deploy list: [] or [the deploy]. Each record
// carries pre_upgrade_deploy, which software_deploy_show_api always adds
// ("Ensure pre_upgrade_deploy is in the response") and the real
// "software deploy show" reads (deploy_shell.py do_show: a KeyError
// without it).
func (s *Server) listDeploys(w http.ResponseWriter, _ *http.Request) {
	out := []map[string]any{}
	s.WithModel(func(m *starlingx.System, now time.Time) {
		for _, d := range m.Deploys(now) {
			out = append(out, map[string]any{
				"from_release": d.FromRelease, "to_release": d.ToRelease, "feed_repo": d.FeedRepo,
				"commit_id": d.CommitID, "reboot_required": d.RebootRequired, "state": d.State,
				"pre_upgrade_deploy": false,
			})
		}
	})
	writeJSON(w, http.StatusOK, out)
}
