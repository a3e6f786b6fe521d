package fakevim

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// SysinvHandler serves the sysinv (platform) API: /v1/kube_versions[/{v}],
// /v1/kube_upgrade, /v1/isystems, /v1/ihosts and host swact
// (starlingx/config sysinv api/controllers/v1).
func (s *Server) SysinvHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/kube_versions", s.listKubeVersions)
	mux.HandleFunc("GET /v1/kube_versions/{version}", s.getKubeVersion)
	mux.HandleFunc("GET /v1/kube_upgrade", s.listKubeUpgrades)
	mux.HandleFunc("GET /v1/isystems", s.listSystems)
	mux.HandleFunc("GET /v1/ihosts", s.listHosts)
	mux.HandleFunc("GET /v1/ihosts/{id}", s.getHost)
	mux.HandleFunc("PATCH /v1/ihosts/{id}", s.patchHost)
	return s.api("sysinv", mux)
}

// listKubeVersions answers the collection unexpanded: version, target and
// state only (KubeVersionCollection.convert_with_links, expand=False).
func (s *Server) listKubeVersions(w http.ResponseWriter, _ *http.Request) {
	out := []map[string]any{}
	s.WithModel(func(m *starlingx.System, now time.Time) {
		for _, k := range m.KubeVersions(now) {
			out = append(out, map[string]any{"version": k.Version, "target": k.Target, "state": k.State})
		}
	})
	writeJSON(w, http.StatusOK, map[string]any{"kube_versions": out})
}

func (s *Server) getKubeVersion(w http.ResponseWriter, r *http.Request) {
	v := r.PathValue("version")
	var out map[string]any
	s.WithModel(func(m *starlingx.System, now time.Time) {
		for _, k := range m.KubeVersions(now) {
			if k.Version == v {
				out = map[string]any{"version": k.Version, "upgrade_from": nonNil(k.UpgradeFrom), "downgrade_to": nonNil(k.DowngradeTo),
					"applied_patches": nonNil(k.AppliedPatches), "available_patches": nonNil(k.AvailablePatches),
					"target": k.Target, "state": k.State}
			}
		}
	})
	if out == nil {
		writeSysinvFault(w, http.StatusNotFound, "Kubernetes version "+v+" could not be found.")
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listKubeUpgrades(w http.ResponseWriter, r *http.Request) {
	out := []map[string]any{}
	s.WithModel(func(m *starlingx.System, now time.Time) {
		for _, u := range m.KubeUpgrades(now) {
			out = append(out, map[string]any{"uuid": u.UUID, "from_version": u.FromVersion, "to_version": u.ToVersion,
				"state": u.State, "links": []map[string]string{{"rel": "self", "href": "http://" + r.Host + "/v1/kube_upgrade/" + u.UUID}}})
		}
	})
	writeJSON(w, http.StatusOK, map[string]any{"kube_upgrades": out})
}

func (s *Server) listSystems(w http.ResponseWriter, _ *http.Request) {
	var info starlingx.SystemInfo
	s.WithModel(func(m *starlingx.System, now time.Time) { info = m.SystemInfo(now) })
	writeJSON(w, http.StatusOK, map[string]any{"isystems": []map[string]any{{
		"uuid": info.UUID, "name": info.Name, "system_type": info.SystemType, "system_mode": info.SystemMode,
		"software_version": info.SoftwareVersion, "description": "", "timezone": "UTC", "region_name": "RegionOne",
		"capabilities": map[string]any{}, "distributed_cloud_role": nil,
	}}})
}

func (s *Server) listHosts(w http.ResponseWriter, _ *http.Request) {
	out := []map[string]any{}
	s.WithModel(func(m *starlingx.System, now time.Time) {
		for i, h := range m.Hosts(now) {
			out = append(out, hostJSON(i, h))
		}
	})
	writeJSON(w, http.StatusOK, map[string]any{"ihosts": out})
}

// hostJSON is one host as host.py Host.convert_with_links shows the fields
// the operator and cgtsclient read. id is the database id (Host.id, in
// minimum_fields); cgtsclient's host-swact patches /v1/ihosts/{id}.
func hostJSON(i int, h starlingx.Host) map[string]any {
	caps := map[string]any{}
	if p := h.ActivityCapability(); p != "" {
		caps["Personality"] = p
	}
	return map[string]any{"id": i + 1, "uuid": h.UUID, "hostname": h.Hostname, "personality": h.Personality,
		"subfunctions": h.Subfunctions, "administrative": h.Administrative, "operational": h.Operational,
		"availability": h.Availability, "capabilities": caps, "kubelet_version": h.KubeletVersion}
}

// getHost serves GET /v1/ihosts/{id}: the uuid, the integer id or the
// hostname (HostController.get_one; cgtsclient looks hosts up by name).
func (s *Server) getHost(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var out map[string]any
	s.WithModel(func(m *starlingx.System, now time.Time) {
		for i, h := range m.Hosts(now) {
			if h.UUID == id || h.Hostname == id || strconv.Itoa(i+1) == id {
				out = hostJSON(i, h)
			}
		}
	})
	if out == nil {
		writeSysinvFault(w, http.StatusNotFound, "Host "+id+" could not be found.")
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// patchHost accepts the swact action: [{"op":"replace","path":"/action","value":"swact"}].
func (s *Server) patchHost(w http.ResponseWriter, r *http.Request) {
	var patch []struct{ Op, Path, Value string }
	if err := json.NewDecoder(r.Body).Decode(&patch); err != nil || len(patch) != 1 || patch[0].Path != "/action" || patch[0].Value != "swact" {
		writeSysinvFault(w, http.StatusBadRequest, "fakevim supports only the swact action: [{\"op\":\"replace\",\"path\":\"/action\",\"value\":\"swact\"}]")
		return
	}
	record(r).Action = "swact"
	id := r.PathValue("id")
	var err error
	s.WithModel(func(m *starlingx.System, now time.Time) {
		name := id
		for i, h := range m.Hosts(now) {
			// sysinv's db ihost_get takes the uuid or the integer id.
			if h.UUID == id || strconv.Itoa(i+1) == id {
				name = h.Hostname
			}
		}
		err = m.Swact(now, name)
	})
	var e *starlingx.Error
	if errors.As(err, &e) {
		writeSysinvFault(w, e.Code, e.Reason)
		return
	}
	s.listHostsOne(w, id)
}

func (s *Server) listHostsOne(w http.ResponseWriter, id string) {
	var out map[string]any
	s.WithModel(func(m *starlingx.System, now time.Time) {
		for i, h := range m.Hosts(now) {
			if h.UUID == id || h.Hostname == id || strconv.Itoa(i+1) == id {
				out = hostJSON(i, h)
			}
		}
	})
	writeJSON(w, http.StatusOK, out)
}
