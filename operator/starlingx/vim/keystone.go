package vim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ErrNoEndpoint: the Keystone catalog has no endpoint for a service in the
// configured region and interface. A configuration error, never retried.
var ErrNoEndpoint = errors.New("no endpoint in the keystone catalog")

// token is a Keystone token with the catalog it came with.
type token struct {
	id        string
	expires   time.Time
	refreshAt time.Time
	catalog   []catalogService
}

type catalogService struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Endpoints []struct {
		Interface string `json:"interface"`
		Region    string `json:"region"`
		RegionID  string `json:"region_id"`
		URL       string `json:"url"`
	} `json:"endpoints"`
}

// authResponse is the part of Keystone's POST /v3/auth/tokens answer the
// client reads; the token id is the X-Subject-Token header.
type authResponse struct {
	Token struct {
		ExpiresAt string           `json:"expires_at"`
		IssuedAt  string           `json:"issued_at"`
		Catalog   []catalogService `json:"catalog"`
	} `json:"token"`
}

// currentToken returns the cached token, fetching a new one when there is
// none or it is about to expire. Concurrent callers wait for one fetch.
func (c *HTTPClient) currentToken(ctx context.Context) (*token, error) {
	c.tokMu.Lock()
	defer c.tokMu.Unlock()
	if c.tok != nil && c.cfg.Now().Before(c.tok.refreshAt) {
		return c.tok, nil
	}
	var tok *token
	err := c.retry(ctx, true, func() error {
		var err error
		tok, err = c.authenticate(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	c.tok = tok
	return tok, nil
}

// invalidate drops tok from the cache (after a 401), unless another caller
// already replaced it.
func (c *HTTPClient) invalidate(tok *token) {
	c.tokMu.Lock()
	defer c.tokMu.Unlock()
	if c.tok == tok {
		c.tok = nil
	}
}

// authenticate is POST {auth}/auth/tokens with password credentials scoped
// to the project (nfv-client openstack.py get_token).
func (c *HTTPClient) authenticate(ctx context.Context) (*token, error) {
	cr := c.cfg.Credentials
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": cr.Username, "password": cr.Password.reveal(), "domain": map[string]string{"name": cr.UserDomainName}}}},
		"scope": map[string]any{"project": map[string]any{"name": cr.ProjectName, "domain": map[string]string{"name": cr.ProjectDomainName}}},
	}}
	req := request{service: "keystone", op: "get a keystone token for user " + cr.Username, method: http.MethodPost, path: "/auth/tokens", body: body}
	status, data, hdr, err := c.roundTrip(ctx, req, cr.AuthURL, "")
	if err != nil || status/100 != 2 {
		return nil, c.failure(req, status, data, err)
	}
	id := hdr.Get("X-Subject-Token")
	var ar authResponse
	if id == "" {
		return nil, c.failure(req, status, nil, errors.New("keystone answered without an X-Subject-Token header"))
	}
	if err := json.Unmarshal(data, &ar); err != nil {
		return nil, c.failure(req, status, nil, fmt.Errorf("decode keystone token: %w", err))
	}
	return c.newToken(id, ar), nil
}

// newToken sets the refresh time a tenth of the lifetime (at most five
// minutes) before expiry.
func (c *HTTPClient) newToken(id string, ar authResponse) *token {
	now := c.cfg.Now()
	expires, err := time.Parse(time.RFC3339Nano, ar.Token.ExpiresAt)
	if err != nil {
		expires = now.Add(time.Hour)
	}
	issued, err := time.Parse(time.RFC3339Nano, ar.Token.IssuedAt)
	if err != nil || issued.After(now) {
		issued = now
	}
	margin := min(5*time.Minute, expires.Sub(issued)/10)
	c.secrets.add(id)
	return &token{id: id, expires: expires, refreshAt: expires.Add(-margin), catalog: ar.Token.Catalog}
}

// serviceKeys are the catalog type and name of each service.
var serviceKeys = map[string][2]string{
	"vim":    {"nfv", "vim"},
	"usm":    {"usm", "usm"},
	"sysinv": {"platform", "sysinv"},
}

// endpoint is the base URL of service: explicit, else from the catalog.
func (c *HTTPClient) endpoint(tok *token, service string) (string, error) {
	if u := c.explicit[service]; u != "" {
		return u, nil
	}
	key := serviceKeys[service]
	cr := c.cfg.Credentials
	for _, s := range tok.catalog {
		if s.Type != key[0] || (s.Name != "" && s.Name != key[1]) {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Interface == cr.Interface && (e.Region == cr.RegionName || e.RegionID == cr.RegionName) {
				return stripVersion(e.URL), nil
			}
		}
	}
	return "", fmt.Errorf("%w: no %s endpoint of service type %q (%s) in region %q; set Endpoints.%s or fix the region / interface",
		ErrNoEndpoint, cr.Interface, key[0], key[1], cr.RegionName, strings.ToUpper(service[:1])+service[1:])
}

// stripVersion drops a trailing "/", and a trailing version segment such as
// "/v1" (nfv-client objects.py _url_strip_version).
func stripVersion(u string) string {
	u = strings.TrimRight(u, "/")
	if i := strings.LastIndex(u, "/"); i > len("https://") {
		last := u[i+1:]
		if len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789.") == "" {
			return u[:i]
		}
	}
	return u
}
