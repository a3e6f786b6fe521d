package fakevim

import (
	"context"
	"net/http"
	"time"
)

type recordKey struct{}

// record returns the log entry of the request being served.
func record(r *http.Request) *Request {
	if rec, ok := r.Context().Value(recordKey{}).(*Request); ok {
		return rec
	}
	return &Request{}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// api wraps a service handler: log the request, apply HTTP faults, check
// the token (except on Keystone).
func (s *Server) api(service string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &Request{Service: service, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
		sw := &statusWriter{ResponseWriter: w}
		defer func() { s.logRequest(rec, sw.status) }()
		unavailable, delay := s.takeFault(service)
		if delay > 0 {
			rec.Fault = "delayed"
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if unavailable {
			rec.Fault = "unavailable"
			writeUnavailable(sw)
			return
		}
		if service != "keystone" && !s.validToken(r.Header.Get("X-Auth-Token")) {
			writeUnauthorized(sw)
			return
		}
		h.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), recordKey{}, rec)))
	})
}

func (s *Server) logRequest(rec *Request, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	rec.Seq, rec.Time, rec.Status = s.seq, s.opts.Wall(), status
	s.log = append(s.log, *rec)
}
