package vim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"time"
)

// request is one call to a service.
type request struct {
	service string // "keystone", "vim", "usm", "sysinv"
	op      string // what is attempted, for errors: "create sw-upgrade strategy"
	method  string
	path    string // below the service base URL: "/api/orchestration/sw-upgrade/strategy"
	query   url.Values
	body    any // JSON-encoded when non-nil
	out     any // JSON-decoded from a 2xx body when non-nil
}

// call performs req against its service with the cached token: one token
// refresh on 401, retries with backoff for GETs only.
func (c *HTTPClient) call(ctx context.Context, req request) error {
	return c.retry(ctx, req.method == http.MethodGet, func() error { return c.attempt(ctx, req) })
}

func (c *HTTPClient) attempt(ctx context.Context, req request) error {
	tok, err := c.currentToken(ctx)
	if err != nil {
		return err
	}
	base, err := c.endpoint(tok, req.service)
	if err != nil {
		return &Error{Service: req.service, Op: req.op, Method: req.method, Path: req.path, Err: err}
	}
	status, data, _, err := c.roundTrip(ctx, req, base, tok.id)
	if err == nil && status == http.StatusUnauthorized {
		c.cfg.Log.V(1).Info("starlingx token refused, fetching a new one", "service", req.service, "path", req.path)
		c.invalidate(tok)
		if tok, err = c.currentToken(ctx); err != nil {
			return err
		}
		status, data, _, err = c.roundTrip(ctx, req, base, tok.id)
	}
	if err != nil || status/100 != 2 {
		return c.failure(req, status, data, err)
	}
	if req.out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, req.out); err != nil {
			return &Error{Service: req.service, Op: req.op, Method: req.method, Path: req.path, StatusCode: status,
				FaultString: "cannot decode the response: " + c.secrets.scrub(err.Error())}
		}
	}
	return nil
}

// retry runs fn, again after a backoff while it fails transiently and the
// call is idempotent.
func (c *HTTPClient) retry(ctx context.Context, idempotent bool, fn func() error) error {
	r := c.cfg.Retry
	delay := r.Initial
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !idempotent || attempt >= r.Attempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
		c.cfg.Log.V(1).Info("starlingx request failed, retrying", "attempt", attempt, "delay", delay.String(), "error", err.Error())
		if !c.cfg.Sleep(ctx.Done(), delay) {
			return err
		}
		delay = min(time.Duration(float64(delay)*r.Factor), r.Max)
	}
}

// retryable: 5xx, timeouts and connection errors, not configuration errors.
func retryable(err error) bool {
	e, ok := asError(err)
	if !ok || (e.Err != nil && isConfigError(e.Err)) {
		return false
	}
	return e.StatusCode >= 500 || (e.StatusCode == 0 && e.Err != nil)
}

// roundTrip sends one HTTP request with its own timeout and reads the
// answer. It logs the method, path, status and duration, never headers or
// bodies.
func (c *HTTPClient) roundTrip(ctx context.Context, req request, base, tokenID string) (int, []byte, http.Header, error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	u := base + req.path
	if len(req.query) > 0 {
		u += "?" + req.query.Encode()
	}
	var body io.Reader
	if req.body != nil {
		b, err := json.Marshal(req.body)
		if err != nil {
			return 0, nil, nil, err
		}
		body = bytes.NewReader(b)
	}
	hr, err := http.NewRequestWithContext(withEndpoint(actx, req.service, endpointOf(req.method, req.path)), req.method, u, body)
	if err != nil {
		return 0, nil, nil, err
	}
	hr.Header.Set("Accept", "application/json")
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if tokenID != "" {
		hr.Header.Set("X-Auth-Token", tokenID)
	}
	start := time.Now()
	resp, err := c.http.Do(hr)
	if err != nil {
		c.cfg.Log.V(1).Info("starlingx request", "service", req.service, "method", req.method, "path", req.path, "error", c.secrets.scrub(err.Error()))
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	c.cfg.Log.V(1).Info("starlingx request", "service", req.service, "method", req.method, "path", req.path,
		"status", resp.StatusCode, "duration", time.Since(start).String())
	return resp.StatusCode, data, resp.Header, err
}

// failure turns a transport error or a non-2xx answer into an *Error
// carrying the server's reason with secrets scrubbed.
func (c *HTTPClient) failure(req request, status int, data []byte, err error) error {
	e := &Error{Service: req.service, Op: req.op, Method: req.method, Path: req.path, StatusCode: status}
	if err != nil {
		e.StatusCode = 0
		e.Err = &scrubbedError{msg: c.secrets.scrub(err.Error()), cause: err}
		return e
	}
	e.FaultString = c.secrets.scrub(faultString(data))
	return e
}

// scrubbedError shows a transport error's text with secrets removed while
// keeping its chain for errors.Is / errors.As.
type scrubbedError struct {
	msg   string
	cause error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.cause }
