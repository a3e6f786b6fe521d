package fakevim

import "time"

// Request is one API request as fakevim saw it. Bodies are not kept;
// Action is the action of a strategy actions POST and Force the force of
// a strategy DELETE.
type Request struct {
	Seq     int       `json:"seq"`
	Time    time.Time `json:"time"`    // wall clock
	Service string    `json:"service"` // keystone, vim, usm, sysinv
	Method  string    `json:"method"`
	Path    string    `json:"path"`
	Query   string    `json:"query,omitempty"`
	Status  int       `json:"status"`
	Action  string    `json:"action,omitempty"`
	Force   *bool     `json:"force,omitempty"`
	Fault   string    `json:"fault,omitempty"` // "unavailable" / "delayed" when a fault answered
}

// Requests returns the request log.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// ClearRequests empties the request log.
func (s *Server) ClearRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
}

// CountRequests counts logged requests with this method and path.
func (s *Server) CountRequests(method, path string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}
