package fakevim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"time"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// VIMHandler serves /api/orchestration (nfv-vim api/controllers/v1/
// orchestration/sw_update): the strategy of a type (GET, GET by uuid,
// POST create, DELETE with {"force"}), its actions and the current
// strategy.
func (s *Server) VIMHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/orchestration/current-strategy/strategy", s.currentStrategy)
	mux.HandleFunc("GET /api/orchestration/{type}/strategy", s.getStrategy)
	mux.HandleFunc("GET /api/orchestration/{type}/strategy/{uuid}", s.getStrategyByUUID)
	mux.HandleFunc("POST /api/orchestration/{type}/strategy", s.createStrategy)
	mux.HandleFunc("DELETE /api/orchestration/{type}/strategy", s.deleteStrategy)
	mux.HandleFunc("POST /api/orchestration/{type}/strategy/actions", s.strategyAction)
	return s.api("vim", mux)
}

// knownTypes are the VIM's strategy types; fakevim models two of them and
// answers "no strategy" for the others.
var knownTypes = map[string]bool{"sw-upgrade": true, "kube-upgrade": true, "fw-update": true,
	"kube-rootca-update": true, "system-config-update": true}

func strategyType(w http.ResponseWriter, r *http.Request) (starlingx.StrategyType, bool) {
	t := r.PathValue("type")
	if !knownTypes[t] {
		writeVIMFault(w, http.StatusNotFound, "The resource could not be found.")
		return "", false
	}
	return starlingx.StrategyType(t), true
}

func (s *Server) getStrategy(w http.ResponseWriter, r *http.Request) {
	t, ok := strategyType(w, r)
	if !ok {
		return
	}
	var body map[string]any
	s.WithModel(func(m *starlingx.System, now time.Time) {
		body = map[string]any{"strategy": nil}
		if st, ok := m.Strategy(now, t); ok {
			body["strategy"] = strategyJSON(st)
		}
	})
	writeJSON(w, http.StatusOK, body)
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// getStrategyByUUID serves GET …/strategy/{uuid} as the real VIM does:
// 400 for a malformed uuid (SwUpdateStrategyAPI.get_one), else 404 always:
// get_one never sets the request's sw_update_type, so
// vim_sw_update_api_get_strategy (_vim_sw_update_api_events.py) looks up
// type "unknown", finds no strategy and answers NOT_FOUND.
func (s *Server) getStrategyByUUID(w http.ResponseWriter, r *http.Request) {
	if _, ok := strategyType(w, r); !ok {
		return
	}
	uuid := r.PathValue("uuid")
	if !uuidRE.MatchString(uuid) {
		writeVIMFault(w, http.StatusBadRequest, "Invalid strategy uuid, uuid="+uuid)
		return
	}
	writeVIMFault(w, http.StatusNotFound, "The resource could not be found.")
}

func (s *Server) currentStrategy(w http.ResponseWriter, _ *http.Request) {
	body := map[string]any{"strategy": nil}
	s.WithModel(func(m *starlingx.System, now time.Time) {
		if t, state, ok := m.CurrentStrategy(now); ok {
			body["strategy"] = map[string]any{"name": t, "state": state}
		}
	})
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) deleteStrategy(w http.ResponseWriter, r *http.Request) {
	t, ok := strategyType(w, r)
	if !ok {
		return
	}
	var body struct {
		Force bool `json:"force"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil && !errors.Is(err, io.EOF) {
		writeVIMFault(w, http.StatusBadRequest, "Invalid input for field/attribute force.")
		return
	}
	record(r).Force = &body.Force
	var err error
	s.WithModel(func(m *starlingx.System, now time.Time) { err = m.DeleteStrategy(now, t, "", body.Force) })
	if err != nil {
		writeModelError(w, err)
		return
	}
	// SwUpdateStrategyAPI.delete: wsexpose(None, …, status_code=httplib.OK):
	// 200 with an empty body.
	w.WriteHeader(http.StatusOK)
}

// writeModelError answers a model refusal with its status and reason.
func writeModelError(w http.ResponseWriter, err error) {
	var e *starlingx.Error
	if errors.As(err, &e) {
		writeVIMFault(w, e.Code, e.Reason)
		return
	}
	writeVIMFault(w, http.StatusInternalServerError, err.Error())
}
