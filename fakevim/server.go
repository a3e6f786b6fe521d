package fakevim

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// ServiceURLs are the base URLs fakevim puts in the Keystone catalog.
type ServiceURLs struct {
	Keystone string // "http://127.0.0.1:5000" (the catalog lists it with "/v3")
	VIM      string // "http://127.0.0.1:4545"
	USM      string // "http://127.0.0.1:5493"
	Sysinv   string // "http://127.0.0.1:6385" (the catalog lists it with "/v1", as sysinv registers it)
}

// Options configure a Server.
type Options struct {
	Model       *starlingx.System // required
	Clock       func() time.Time  // model time; default: the model's time running at wall speed
	Wall        func() time.Time  // token expiry and the request log; default time.Now
	Username    string            // accepted user; default "admin"
	Password    string            // accepted password; default "fakevim-secret"
	ProjectName string            // accepted project; default "admin"
	Region      string            // catalog region; default "RegionOne"
	TokenTTL    time.Duration     // wall-clock token lifetime; default 1h
	URLs        ServiceURLs       // the catalog; see SetURLs
	HTTPFaults  HTTPFaults        // initial HTTP-level faults
}

// Server is the fake StarlingX system. Safe for concurrent use: every
// request takes one mutex around the model.
type Server struct {
	opts   Options
	mu     sync.Mutex
	model  *starlingx.System
	urls   ServiceURLs
	tokens map[string]time.Time // token -> wall-clock expiry
	faults HTTPFaults
	log    []Request
	seq    int
}

// New returns a server over opts.Model.
func New(opts Options) (*Server, error) {
	if opts.Model == nil {
		return nil, fmt.Errorf("fakevim: no system model; build one with starlingx.New")
	}
	if opts.Wall == nil {
		opts.Wall = time.Now
	}
	if opts.Clock == nil {
		opts.Clock = NewSpeedClock(opts.Model.Now(), 1, opts.Wall).Now
	}
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&opts.Username, "admin")
	def(&opts.Password, "fakevim-secret")
	def(&opts.ProjectName, "admin")
	def(&opts.Region, "RegionOne")
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = time.Hour
	}
	return &Server{opts: opts, model: opts.Model, urls: opts.URLs, tokens: map[string]time.Time{}, faults: opts.HTTPFaults}, nil
}

// SetURLs sets the catalog's service URLs (once the listeners are up).
func (s *Server) SetURLs(u ServiceURLs) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.urls = u
}

// WithModel runs fn on the model at the current model time, under the lock.
func (s *Server) WithModel(fn func(m *starlingx.System, now time.Time)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.opts.Clock()
	s.model.Advance(now)
	fn(s.model, now)
}

// Handler serves every service and /admin on one listener.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v3/", s.KeystoneHandler())
	mux.Handle("/api/", s.VIMHandler())
	usm, sysinv := s.USMHandler(), s.SysinvHandler()
	for _, p := range []string{"/v1/release", "/v1/release/", "/v1/deploy"} {
		mux.Handle(p, usm)
	}
	for _, p := range []string{"/v1/kube_versions", "/v1/kube_versions/", "/v1/kube_upgrade", "/v1/isystems", "/v1/ihosts", "/v1/ihosts/"} {
		mux.Handle(p, sysinv)
	}
	mux.Handle("/admin/", s.AdminHandler())
	return mux
}
