package vim

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
)

// Error is a failed request to a StarlingX service. StatusCode is 0 when
// no HTTP answer arrived (connection refused, timeout).
type Error struct {
	Service     string // "keystone", "vim", "usm", "sysinv"
	Op          string // what was attempted, naming the object: "create sw-upgrade strategy"
	Method      string
	Path        string // URL path, without host or query
	StatusCode  int
	FaultString string // the server's reason (wsme "faultstring", Keystone error.message), secrets scrubbed
	Err         error  // transport cause, if any
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s: %s %s", e.Service, e.Op, e.Method, e.Path)
	switch {
	case e.StatusCode != 0:
		msg += fmt.Sprintf(": %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	case e.Err != nil:
		msg += ": " + e.Err.Error()
	}
	if e.FaultString != "" {
		msg += ": " + e.FaultString
	}
	if h := e.hint(); h != "" {
		msg += "; " + h
	}
	return msg
}

// Unwrap returns the transport cause.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) hint() string {
	switch {
	case e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden:
		return "check the Keystone credentials in the Secret and the user's roles"
	case e.StatusCode == http.StatusNotFound:
		return "it does not exist (any more): observe the system again"
	case e.StatusCode == http.StatusConflict:
		return "another strategy exists or this one is busy: wait for it or delete it"
	case e.StatusCode == http.StatusBadRequest:
		return "the request was refused: fix it, retrying will not help"
	case isUnavailable(e):
		return "the service is unavailable: retry later"
	case e.Err != nil && errors.Is(e.Err, ErrNoEndpoint):
		return ""
	case e.Err != nil && isConfigError(e.Err):
		return "the server certificate does not verify: give the system's CA in TLS.CABundle"
	}
	return ""
}

func isUnavailable(e *Error) bool {
	switch e.StatusCode {
	case 0:
		return e.Err != nil && !isConfigError(e.Err)
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// isConfigError: failures that retrying cannot fix, a missing catalog
// endpoint or a certificate the configured CA bundle does not verify.
func isConfigError(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.Is(err, ErrNoEndpoint) || errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}

func asError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsNotFound reports a 404: no such strategy, release or host, or an
// action naming a strategy that no longer exists ("strategy does not exist").
func IsNotFound(err error) bool {
	e, ok := asError(err)
	return ok && e.StatusCode == http.StatusNotFound
}

// IsConflict reports a 409: a strategy already exists, or a delete of a
// strategy that is building, applying or aborting without force.
func IsConflict(err error) bool {
	e, ok := asError(err)
	return ok && e.StatusCode == http.StatusConflict
}

// IsUnavailable reports a transient failure: 502/503/504, a timeout or a
// connection error. GETs were already retried.
func IsUnavailable(err error) bool { e, ok := asError(err); return ok && isUnavailable(e) }

// IsBadRequest reports a 400: the service refused the request as invalid.
func IsBadRequest(err error) bool {
	e, ok := asError(err)
	return ok && e.StatusCode == http.StatusBadRequest
}

// IsUnauthorized reports a 401 that survived a token refresh, or a 403.
func IsUnauthorized(err error) bool {
	e, ok := asError(err)
	return ok && (e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden)
}

// FaultString is the server's reason carried by err, or "".
func FaultString(err error) string {
	if e, ok := asError(err); ok {
		return e.FaultString
	}
	return ""
}
