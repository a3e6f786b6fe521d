package fakevim

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// keystoneTime is Keystone's timestamp form, "2026-01-01T00:00:00.000000Z".
const keystoneTime = "2006-01-02T15:04:05.000000Z"

type authRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password struct {
				User struct {
					Name     string `json:"name"`
					Password string `json:"password"`
				} `json:"user"`
			} `json:"password"`
		} `json:"identity"`
		Scope struct {
			Project struct {
				Name string `json:"name"`
			} `json:"project"`
		} `json:"scope"`
	} `json:"auth"`
}

// KeystoneHandler serves POST /v3/auth/tokens: password authentication
// scoped to a project; 201 with the token in X-Subject-Token and the
// service catalog in the body, 401 on bad credentials.
func (s *Server) KeystoneHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/auth/tokens", s.issueToken)
	return s.api("keystone", mux)
}

func (s *Server) issueToken(w http.ResponseWriter, r *http.Request) {
	var req authRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "title": "Bad Request",
			"message": "The request body is not valid JSON."}})
		return
	}
	a := req.Auth
	if len(a.Identity.Methods) == 0 || a.Identity.Methods[0] != "password" || a.Identity.Password.User.Name != s.opts.Username ||
		a.Identity.Password.User.Password != s.opts.Password || a.Scope.Project.Name != s.opts.ProjectName {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": 401, "title": "Unauthorized",
			"message": "The request you have made requires authentication."}})
		return
	}
	id := newTokenID()
	s.mu.Lock()
	issued := s.opts.Wall().UTC()
	expires := issued.Add(s.opts.TokenTTL)
	s.tokens[id] = expires
	catalog := s.catalog()
	s.mu.Unlock()
	w.Header().Set("X-Subject-Token", id)
	writeJSON(w, http.StatusCreated, map[string]any{"token": map[string]any{
		"methods":    []string{"password"},
		"user":       map[string]any{"id": "fake-user-id", "name": s.opts.Username, "domain": map[string]string{"id": "default", "name": "Default"}},
		"project":    map[string]any{"id": "fake-project-id", "name": s.opts.ProjectName, "domain": map[string]string{"id": "default", "name": "Default"}},
		"roles":      []map[string]string{{"id": "fake-admin-role", "name": "admin"}},
		"issued_at":  issued.Format(keystoneTime),
		"expires_at": expires.Format(keystoneTime),
		"catalog":    catalog,
	}})
}

func newTokenID() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return "gAAAAA" + hex.EncodeToString(b)
}

// catalog lists identity, vim (nfv), usm and sysinv (platform) with
// public, internal and admin endpoints in the configured region.
func (s *Server) catalog() []map[string]any {
	svc := func(typ, name, url string) map[string]any {
		var eps []map[string]string
		for _, iface := range []string{"public", "internal", "admin"} {
			eps = append(eps, map[string]string{"id": name + "-" + iface, "interface": iface,
				"region": s.opts.Region, "region_id": s.opts.Region, "url": url})
		}
		return map[string]any{"id": name + "-id", "type": typ, "name": name, "endpoints": eps}
	}
	u := s.urls
	return []map[string]any{
		svc("identity", "keystone", strings.TrimRight(u.Keystone, "/")+"/v3"),
		svc("nfv", "vim", strings.TrimRight(u.VIM, "/")),
		svc("usm", "usm", strings.TrimRight(u.USM, "/")),
		svc("platform", "sysinv", strings.TrimRight(u.Sysinv, "/")+"/v1"),
	}
}

func (s *Server) validToken(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[id]
	return ok && s.opts.Wall().Before(exp)
}

// ExpireTokens invalidates every token issued so far.
func (s *Server) ExpireTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens = map[string]time.Time{}
}
