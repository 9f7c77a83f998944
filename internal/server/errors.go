package server

import (
	"encoding/json"
	"net/http"
)

// Error codes. The real server prefixes runtime errors with its runtime
// (DOCKER::, KUBERNETES::); this one uses LOCAL::. Clients match the suffix.
// Codes the real server emits whatever the runtime keep its spelling.
const (
	codeNotFound          = "LOCAL::SANDBOX_NOT_FOUND"
	codeNotRunning        = "LOCAL::SANDBOX_NOT_RUNNING"
	codeNotPaused         = "LOCAL::SANDBOX_NOT_PAUSED"
	codePaused            = "LOCAL::SANDBOX_PAUSED"
	codeInvalidExpiration = "LOCAL::INVALID_EXPIRATION"
	codeNoExpiration      = "LOCAL::SANDBOX_NO_EXPIRATION"
	codeSnapshotNotFound  = "LOCAL::SNAPSHOT_NOT_FOUND"
	codeCreateFailed      = "LOCAL::SANDBOX_CREATE_FAILED"
	codeShuttingDown      = "LOCAL::SERVER_SHUTTING_DOWN"
	codePortUnavailable   = "LOCAL::PORT_HANDLER_NOT_AVAILABLE"
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
