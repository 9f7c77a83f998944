package server

import "net/http"

// routes registers the lifecycle API and the server proxy. The real server
// mounts every route both at / and under /v1; so does this one.
func (s *Server) routes(mux *http.ServeMux) {
	handle := func(method, path string, h http.HandlerFunc) {
		for _, prefix := range []string{"", "/v1"} {
			pattern := prefix + path
			if method != "" {
				pattern = method + " " + pattern
			}
			mux.HandleFunc(pattern, h)
		}
	}
	handle("GET", "/health", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "healthy"})
	})
	handle("GET", "/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": Version})
	})
	handle("POST", "/metrics/events", s.reportMetricsEvent) // metricsevents.go
	handle("POST", "/sandboxes", s.createSandbox)
	handle("GET", "/sandboxes", s.listSandboxes)
	handle("GET", "/sandboxes/{id}", s.getSandbox)
	handle("DELETE", "/sandboxes/{id}", s.deleteSandbox)
	handle("PATCH", "/sandboxes/{id}/metadata", s.patchMetadata)
	handle("POST", "/sandboxes/{id}/pause", s.pauseSandbox)
	handle("POST", "/sandboxes/{id}/resume", s.resumeSandbox)
	handle("POST", "/sandboxes/{id}/renew-expiration", s.renewExpiration)
	handle("GET", "/sandboxes/{id}/endpoints/{port}", s.getEndpoint)
	handle("POST", "/sandboxes/{id}/snapshots", s.createSnapshot)
	handle("GET", "/snapshots", s.listSnapshots)
	handle("GET", "/snapshots/{id}", s.getSnapshot)
	handle("DELETE", "/snapshots/{id}", s.deleteSnapshot)
	handle("POST", "/templates", s.createTemplate)
	handle("GET", "/templates", s.listTemplates)
	handle("GET", "/templates/{id}", s.getTemplate)
	handle("DELETE", "/templates/{id}", s.deleteTemplate)
	handle("GET", "/sandboxes/{id}/diagnostics/logs", s.diagnosticLogs)
	handle("GET", "/sandboxes/{id}/diagnostics/events", s.diagnosticEvents)
	handle("GET", "/sandboxes/{id}/diagnostics/inspect", s.diagnosticInspect)
	handle("GET", "/sandboxes/{id}/diagnostics/summary", s.diagnosticSummary)
	s.networkPolicyRoutes(handle) // networkpolicy.go
	// Any method, WebSocket included; auth-exempt (see authExempt).
	handle("", "/sandboxes/{id}/proxy/{port}", s.serverProxy)
	handle("", "/sandboxes/{id}/proxy/{port}/{rest...}", s.serverProxy)
}
