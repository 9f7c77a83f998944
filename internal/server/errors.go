package server

import (
	"encoding/json"
	"net/http"
)

// Error codes, spelled as the real server spells them. It prefixes the
// errors of its runtime with the runtime's name; this server runs sandboxes
// on one host as the Docker runtime does, and answers with that runtime's
// codes, so that a script matching the codes of a Docker deployment works
// here too (clients should match the suffix: KUBERNETES:: has the same
// ones). Snapshot and template errors have their own namespaces upstream.
// The two LOCAL:: codes name cases the real server has no code for.
const (
	codeNotFound          = "DOCKER::SANDBOX_NOT_FOUND"
	codeNotRunning        = "DOCKER::SANDBOX_NOT_RUNNING" // also: the data plane of a paused sandbox
	codeNotPaused         = "DOCKER::SANDBOX_NOT_PAUSED"
	codeInvalidExpiration = "DOCKER::INVALID_EXPIRATION" // 400 in the past; 409 for a sandbox without expiry
	codeSnapshotNotFound  = "SNAPSHOT::NOT_FOUND"
	codeCreateFailed      = "DOCKER::SANDBOX_START_FAILED"
	codeShuttingDown      = "LOCAL::SERVER_SHUTTING_DOWN"       // upstream has no shutdown state
	codePortUnavailable   = "LOCAL::PORT_HANDLER_NOT_AVAILABLE" // upstream execd proxies and fails with a text/plain 502
	codeInvalidLabel      = "SANDBOX::INVALID_METADATA_LABEL"
	codeInvalidParameter  = "SANDBOX::INVALID_PARAMETER"
	codeNotSupported      = "SANDBOX::API_NOT_SUPPORTED"
	codeInvalidMetaFormat = "INVALID_METADATA_FORMAT"
	codeMissingAPIKey     = "MISSING_API_KEY"
	codeInvalidAPIKey     = "INVALID_API_KEY"
	codeRouteNotFound     = "NOT_FOUND"
	codeMethodNotAllowed  = "METHOD_NOT_ALLOWED"
	codeInternal          = "INTERNAL_SERVER_ERROR"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeError writes the lifecycle ErrorResponse {"code","message"}.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]string{"code": code, "message": message})
}

// detail is one item of a FastAPI request-validation error.
type detail struct {
	Type  string         `json:"type"`
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Input any            `json:"input"`
	Ctx   map[string]any `json:"ctx,omitempty"`
}

// writeDetails writes FastAPI's 422 {"detail":[...]} validation shape.
func writeDetails(w http.ResponseWriter, ds []detail) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": ds})
}

func missing(loc []any, input any) detail {
	return detail{Type: "missing", Loc: loc, Msg: "Field required", Input: input}
}
