package fakevim

import "time"

// HTTPFaults are failures of the HTTP layer in front of the model.
type HTTPFaults struct {
	UnavailableNext  int           // answer 503 to the next N requests
	UnavailableUntil time.Time     // answer 503 to every request until then (wall clock)
	Delay            time.Duration // hold each response this long (wall clock) before answering
	DelayNext        int           // delay only the next N requests; 0 = all while Delay > 0
	Services         []string      // services affected: "vim", "usm", "sysinv", "keystone"; empty = vim, usm, sysinv
}

// SetHTTPFaults replaces the HTTP-level faults.
func (s *Server) SetHTTPFaults(f HTTPFaults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// HTTPFaults returns the pending HTTP-level faults.
func (s *Server) HTTPFaults() HTTPFaults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// takeFault decides, and consumes, the faults for one request to service.
func (s *Server) takeFault(service string) (unavailable bool, delay time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &s.faults
	if !f.applies(service) {
		return false, 0
	}
	switch {
	case f.UnavailableNext > 0:
		f.UnavailableNext--
		unavailable = true
	case s.opts.Wall().Before(f.UnavailableUntil):
		unavailable = true
	}
	if f.Delay > 0 {
		delay = f.Delay
		if f.DelayNext > 0 {
			f.DelayNext--
			if f.DelayNext == 0 {
				f.Delay = 0
			}
		}
	}
	return unavailable, delay
}

func (f *HTTPFaults) applies(service string) bool {
	if len(f.Services) == 0 {
		return service != "keystone"
	}
	for _, s := range f.Services {
		if s == service {
			return true
		}
	}
	return false
}
