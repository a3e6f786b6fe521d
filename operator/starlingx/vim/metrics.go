package vim

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Request metrics of every StarlingX client (Keystone, VIM, USM, sysinv),
// labelled by service, endpoint (method and path with identifiers replaced,
// e.g. "GET /v1/release/{id}": bounded) and HTTP status code
// ("error" when no answer came). Each attempt counts: a retried GET is
// several requests. The manager registers them (Collectors) with
// controller-runtime's registry, so they are served on /metrics.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "upgrade_operator_starlingx_requests_total",
		Help: "StarlingX API requests by service, endpoint and HTTP status code (\"error\": no answer).",
	}, []string{"service", "endpoint", "code"})
	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "upgrade_operator_starlingx_request_duration_seconds",
		Help:    "StarlingX API request latency by service and endpoint, until the response headers arrived.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14), // 5 ms … ~41 s (the VIM answers within 30 s)
	}, []string{"service", "endpoint"})
)

// Collectors returns the request metrics, for the manager to register.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{requestsTotal, requestDuration}
}

type endpointKey struct{}

type endpointLabels struct{ service, endpoint string }

// withEndpoint labels the requests sent with ctx.
func withEndpoint(ctx context.Context, service, endpoint string) context.Context {
	return context.WithValue(ctx, endpointKey{}, endpointLabels{service, endpoint})
}

// instrumented counts and times every request that carries labels
// (withEndpoint); others pass through uncounted.
type instrumented struct{ next http.RoundTripper }

func instrument(rt http.RoundTripper) http.RoundTripper { return instrumented{next: rt} }

func (t instrumented) RoundTrip(r *http.Request) (*http.Response, error) {
	l, ok := r.Context().Value(endpointKey{}).(endpointLabels)
	if !ok {
		return t.next.RoundTrip(r)
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	requestDuration.WithLabelValues(l.service, l.endpoint).Observe(time.Since(start).Seconds())
	code := "error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	requestsTotal.WithLabelValues(l.service, l.endpoint, code).Inc()
	return resp, err
}

// apiVersion is a path segment naming an API version ("v1", "v3").
var apiVersion = regexp.MustCompile(`^v[0-9]+$`)

// endpointOf is "METHOD /path" with every segment that holds a digit (a
// uuid, a release id, a Kubernetes version) but is no API version replaced
// by {id}: "GET /v1/release/starlingx-13.01.0" is "GET /v1/release/{id}".
func endpointOf(method, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.ContainsAny(s, "0123456789") && !apiVersion.MatchString(s) {
			segs[i] = "{id}"
		}
	}
	return method + " " + strings.Join(segs, "/")
}
