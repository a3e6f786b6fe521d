package fakevim

import (
	"encoding/json"
	"net/http"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// wsmeFault is the VIM's error body (wsme format_exception):
// {"faultcode": "Client"|"Server", "faultstring": ..., "debuginfo": null}.
func wsmeFault(status int, msg string) map[string]any {
	code := "Client"
	if status >= 500 {
		code = "Server"
	}
	return map[string]any{"faultcode": code, "faultstring": msg, "debuginfo": nil}
}

func writeVIMFault(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, wsmeFault(status, msg))
}

// writeSysinvFault wraps the wsme body the way sysinv's
// ParsableErrorMiddleware does: {"error_message": "<wsme JSON>"}.
func writeSysinvFault(w http.ResponseWriter, status int, msg string) {
	inner, _ := json.Marshal(wsmeFault(status, msg))
	writeJSON(w, status, map[string]string{"error_message": string(inner)})
}

// writeUSMFault is USM's ExceptionHook body {"info", "warning", "error"}.
func writeUSMFault(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"info": "", "warning": "", "error": msg})
}

// writeUnauthorized is keystonemiddleware's answer to a missing or bad token.
func writeUnauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", `Keystone uri="keystone"`)
	writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
		"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}})
}

// writeUnavailable is HAProxy's 503 page.
func writeUnavailable(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte("<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n"))
}
