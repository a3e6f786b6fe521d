package controller

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// MaxRefusedWrites is how many consecutive image writes of one component
// the API server may refuse with a non-retryable error before the
// component is Failed (status.components[].refusedWrites counts them).
const MaxRefusedWrites = 3

// ReasonWriteRefused: a component's image write was refused for good (event
// and component reason).
const ReasonWriteRefused = "WriteRefused"

// TerminalWriteError reports whether err, from a Deployment write, will be
// refused again however often it is retried: 403 Forbidden (RBAC, a
// validating webhook's denial, an exceeded ResourceQuota), 422 Invalid (a
// ValidatingAdmissionPolicy's denial, field validation), 400 BadRequest,
// 404 NotFound or 405 MethodNotAllowed. Everything else — 409 Conflict,
// 429 TooManyRequests, 5xx, timeouts, connection errors, errors without an
// API status — is transient and retried with back-off. The status codes
// are the API server's (k8s.io/apimachinery/pkg/api/errors: IsForbidden,
// IsInvalid, …; admission denials: k8s.io/apiserver/pkg/admission
// NewForbidden, and the webhook's default code 403 in
// plugin/pkg/admission/webhook/errors.ToStatusErr).
func TerminalWriteError(err error) bool {
	if err == nil {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	switch status.Status().Code {
	case http.StatusForbidden, http.StatusUnprocessableEntity, http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
		return true
	}
	return false
}

// APIMessage is the API server's message of err (the Status message that
// names the policy, webhook or quota that refused), or err's text when it
// carries no API status.
func APIMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	return err.Error()
}
