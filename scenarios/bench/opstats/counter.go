// Package opstats measures an operator process from inside it: every API
// request it makes (a counting http.RoundTripper wrapped into its
// rest.Config), its reconciles (controller-runtime's
// controller_runtime_reconcile_total), its heap and RSS. A Snapshot is
// served as JSON over HTTP so that a benchmark driving the operator as a
// subprocess can read it before and after an upgrade.
package opstats

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Counter counts API requests by verb and resource. Its Wrap is meant for
// rest.Config.Wrap, so every client built from that config is counted:
// the manager's cache (lists and watches), its client (writes) and its
// event broadcaster. Safe for concurrent use.
type Counter struct {
	mu   sync.Mutex
	n    map[string]int64
	byNS map[string]int64 // requests other than watches, by namespace
}

// NewCounter returns an empty Counter.
func NewCounter() *Counter { return &Counter{n: map[string]int64{}, byNS: map[string]int64{}} }

// Wrap returns rt counting each request it carries.
func (c *Counter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{c: c, next: rt}
}

type roundTripper struct {
	c    *Counter
	next http.RoundTripper
}

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	key := RequestKey(req.Method, req.URL)
	ns := ""
	if !IsWatch(key) {
		ns = RequestNamespace(req.URL)
	}
	r.c.add(key, ns)
	return r.next.RoundTrip(req)
}

func (c *Counter) add(key, ns string) {
	c.mu.Lock()
	c.n[key]++
	if ns != "" {
		c.byNS[ns]++
	}
	c.mu.Unlock()
}

// NamespaceCounts returns a copy of the requests other than watches, by
// the namespace in their path (cluster-scoped ones are not counted).
func (c *Counter) NamespaceCounts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.byNS))
	for k, v := range c.byNS {
		out[k] = v
	}
	return out
}

// RequestNamespace is the namespace of a namespaced API request's path, or "".
func RequestNamespace(u *url.URL) string {
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := 0; i+2 < len(segs); i++ {
		if segs[i] == "namespaces" && (i == 2 && segs[0] == "api" || i == 3 && segs[0] == "apis") {
			return segs[i+1]
		}
	}
	return ""
}

// Counts returns a copy of the counts, keyed "verb resource[/subresource]".
func (c *Counter) Counts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// RequestKey names a Kubernetes API request "verb resource", with the
// verbs of the API server's audit log: get, list, watch, create, update,
// patch, delete, deletecollection; resource is plural, with
// "/subresource" when there is one (e.g. "patch applicationupgrades/status").
// Paths outside /api and /apis are "<method> <path>" (e.g. "GET /version").
func RequestKey(method string, u *url.URL) string {
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	var rest []string
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		rest = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		rest = segs[3:]
	default:
		return method + " " + u.Path
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:] // namespaces/<ns>/<resource>/...
	}
	if len(rest) == 0 {
		return strings.ToLower(method) + " " + u.Path
	}
	resource, named := rest[0], len(rest) >= 2
	if len(rest) >= 3 {
		resource += "/" + rest[2]
	}
	verb := strings.ToLower(method)
	switch method {
	case http.MethodGet:
		switch {
		case isWatch(u.Query()):
			verb = "watch"
		case named:
			verb = "get"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodDelete:
		if !named {
			verb = "deletecollection"
		}
	}
	return verb + " " + resource
}

func isWatch(q url.Values) bool {
	v := q.Get("watch")
	return v == "true" || v == "1"
}

// Total sums counts, excluding keys for which skip returns true (nil skips none).
func Total(counts map[string]int64, skip func(key string) bool) int64 {
	var n int64
	for k, v := range counts {
		if skip == nil || !skip(k) {
			n += v
		}
	}
	return n
}

// IsWatch reports whether a RequestKey is a watch.
func IsWatch(key string) bool { return strings.HasPrefix(key, "watch ") }

// Keys returns the keys of counts, sorted.
func Keys(counts map[string]int64) []string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
