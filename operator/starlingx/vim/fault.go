package vim

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

// faultString extracts the reason from an error body: wsme's
// {"faultcode", "faultstring", "debuginfo"} (VIM), sysinv's
// {"error_message": "<that wsme JSON as a string>"} (ParsableErrorMiddleware),
// Keystone's {"error": {"message"}}, USM's {"error": "...", "info", "warning"},
// else the text itself (an HAProxy 503 page), tags removed, cut at 300 bytes.
func faultString(data []byte) string {
	var m map[string]any
	if json.Unmarshal(data, &m) == nil {
		if inner, ok := m["error_message"].(string); ok {
			if s := faultString([]byte(inner)); s != "" {
				return s
			}
		}
		for _, k := range []string{"faultstring", "message", "error", "detail", "info"} {
			switch v := m[k].(type) {
			case string:
				if v != "" {
					return v
				}
			case map[string]any:
				if s, ok := v["message"].(string); ok {
					return s
				}
			}
		}
	}
	s := strings.Join(strings.Fields(tags.ReplaceAllString(string(data), " ")), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

var tags = regexp.MustCompile(`<[^>]*>`)

// secretSet holds the password and the tokens seen, to scrub them from any
// text the client logs or returns.
type secretSet struct {
	mu     sync.Mutex
	values []string
}

func (s *secretSet) add(v string) {
	if v == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values = append(s.values, v)
	if len(s.values) > 64 { // the password stays first; old tokens rotate out
		s.values = append(s.values[:1:1], s.values[len(s.values)-32:]...)
	}
}

func (s *secretSet) scrub(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.values {
		text = strings.ReplaceAll(text, v, redacted)
	}
	return text
}
