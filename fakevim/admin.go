package fakevim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// AdminHandler serves /admin (no token, not logged, no faults):
//
//	GET    /admin/requests  the request log
//	DELETE /admin/requests  clear it
//	GET    /admin/faults    pending faults
//	POST   /admin/faults    add faults (FaultRequest as JSON)
//	GET    /admin/state     a summary of the model
//	GET    /admin/events    the model's events
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/requests", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.Requests()) })
	mux.HandleFunc("DELETE /admin/requests", func(w http.ResponseWriter, _ *http.Request) {
		s.ClearRequests()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /admin/faults", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.faultsView()) })
	mux.HandleFunc("POST /admin/faults", s.postFaults)
	mux.HandleFunc("GET /admin/state", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.State()) })
	mux.HandleFunc("GET /admin/events", func(w http.ResponseWriter, _ *http.Request) {
		var ev []starlingx.Event
		s.WithModel(func(m *starlingx.System, _ time.Time) { ev = m.Events() })
		writeJSON(w, http.StatusOK, ev)
	})
	return mux
}

// Duration is a time.Duration written as "10s" in JSON.
type Duration time.Duration

// UnmarshalJSON parses "1m30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"10s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// MarshalJSON writes "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// FaultRequest is the body of POST /admin/faults. Counts add to the
// pending ones; Reset clears everything first.
type FaultRequest struct {
	Reset               bool     `json:"reset,omitempty"`
	FailNextBuilds      int      `json:"failNextBuilds,omitempty"`      // next N builds end build-failed
	BuildFailReason     string   `json:"buildFailReason,omitempty"`     // their reason
	TimeoutNextBuilds   int      `json:"timeoutNextBuilds,omitempty"`   // next N builds end build-timeout
	FailApplyAtStage    *int     `json:"failApplyAtStage,omitempty"`    // next apply fails at this stage-id (0-based)
	TimeoutApplyAtStage *int     `json:"timeoutApplyAtStage,omitempty"` // next apply times out at this stage-id
	StrategyType        string   `json:"strategyType,omitempty"`        // limit the stage faults to sw-upgrade or kube-upgrade
	ApplyFailReason     string   `json:"applyFailReason,omitempty"`
	UnavailableNext     int      `json:"unavailableNext,omitempty"` // 503 for the next N API requests
	UnavailableFor      Duration `json:"unavailableFor,omitempty"`  // 503 for this long (wall clock)
	Delay               Duration `json:"delay,omitempty"`           // hold responses this long
	DelayNext           int      `json:"delayNext,omitempty"`       // only the next N (0 = until reset)
	Services            []string `json:"services,omitempty"`        // services the 503 / delay hit; default vim, usm, sysinv
	ExpireTokens        bool     `json:"expireTokens,omitempty"`    // invalidate every token now
	Alarms              *[]Alarm `json:"alarms,omitempty"`          // replace the active alarms
}

// Alarm is an active alarm as the admin API takes it.
type Alarm struct {
	ID            string `json:"id"`
	Severity      string `json:"severity,omitempty"`
	Reason        string `json:"reason,omitempty"`
	MgmtAffecting bool   `json:"mgmtAffecting,omitempty"`
}

func (s *Server) postFaults(w http.ResponseWriter, r *http.Request) {
	var f FaultRequest
	if err := json.NewDecoder(r.Body).Decode(&f); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "fault request: " + err.Error()})
		return
	}
	s.ApplyFaults(f)
	writeJSON(w, http.StatusOK, s.faultsView())
}
