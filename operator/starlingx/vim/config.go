package vim

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// Credentials are the Keystone v3 password credentials, filled by the
// caller from a Secret (the seed's lifecycle plugin injects them from the
// system keyring). The password is a Secret so that printing the struct
// never shows it.
type Credentials struct {
	AuthURL           string // Keystone, e.g. "http://192.168.204.2:5000/v3" (the "/v3" is added when missing)
	Username          string // "admin"
	Password          Secret
	UserDomainName    string // default "Default"
	ProjectName       string // default "admin"
	ProjectDomainName string // default "Default"
	RegionName        string // catalog region; default "RegionOne"
	Interface         string // catalog interface: "internal" (default), "public" or "admin"
}

// Endpoints are explicit service base URLs; an empty one is looked up in
// the Keystone catalog. A trailing version ("/v1") is dropped. Real
// systems serve Keystone on 5000, the VIM on 4545, USM on 5493 and sysinv
// on 6385.
type Endpoints struct {
	VIM    string // "http://controller:4545"
	USM    string // "http://controller:5493"
	Sysinv string // "http://controller:6385"
}

// TLS configures server verification. CABundle (PEM) is added to the
// system roots; InsecureSkipVerify disables verification and is off unless
// set explicitly.
type TLS struct {
	CABundle           []byte
	InsecureSkipVerify bool
	ServerName         string // overrides the name checked in the certificate
}

// Retry is the backoff for idempotent GETs: Attempts tries in all, waiting
// Initial, then ×Factor up to Max between them.
type Retry struct {
	Attempts int           // default 5; 1 disables retries
	Initial  time.Duration // default 200ms
	Factor   float64       // default 2
	Max      time.Duration // default 5s
}

// Config configures New.
type Config struct {
	Credentials    Credentials
	Endpoints      Endpoints
	TLS            TLS
	RequestTimeout time.Duration // per attempt; default 40s (the VIM answers within 30s)
	Retry          Retry
	Log            logr.Logger       // request lines at V(1), retries at V(1); zero value discards
	Transport      http.RoundTripper // overrides the TLS-configured transport (tests)
	Now            func() time.Time  // token expiry clock; default time.Now
	// Sleep waits between retries; default a timer that honours ctx.
	Sleep func(ctxDone <-chan struct{}, d time.Duration) bool
}

func (c *Config) defaults() error {
	cr := &c.Credentials
	if cr.AuthURL == "" || cr.Username == "" || cr.Password == "" {
		return fmt.Errorf("starlingx client config: credentials need an auth URL, a username and a password; fill them from the Keystone Secret")
	}
	cr.AuthURL = strings.TrimRight(cr.AuthURL, "/")
	if !strings.HasSuffix(cr.AuthURL, "/v3") {
		cr.AuthURL += "/v3"
	}
	setDefault(&cr.UserDomainName, "Default")
	setDefault(&cr.ProjectName, "admin")
	setDefault(&cr.ProjectDomainName, "Default")
	setDefault(&cr.RegionName, "RegionOne")
	setDefault(&cr.Interface, "internal")
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 40 * time.Second
	}
	r := &c.Retry
	if r.Attempts <= 0 {
		r.Attempts = 5
	}
	if r.Initial <= 0 {
		r.Initial = 200 * time.Millisecond
	}
	if r.Factor < 1 {
		r.Factor = 2
	}
	if r.Max <= 0 {
		r.Max = 5 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = sleep
	}
	return nil
}

func setDefault(s *string, v string) {
	if *s == "" {
		*s = v
	}
}

// sleep waits d or until done closes; false when done closed first.
func sleep(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}
