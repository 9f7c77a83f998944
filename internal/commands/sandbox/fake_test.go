package sandbox_test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// fakeServer is a scripted OpenSandbox server for what the local server
// cannot show: templates, metrics stream errors and SSE frames, HTML error
// pages, chosen ids. It records every request it gets.
type fakeServer struct {
	*httptest.Server
	ids         []string                  // sandboxes it knows, all Running
	watchLines  []string                  // what /metrics/watch sends, then it ends
	pauseStatus int                       // pause answers this status with an HTML page
	paginate    bool                      // honour page and pageSize (else one page of everything)
	failPage    int                       // the listing page answered with a 500 (0: none)
	record      map[string]any            // fields that replace those of every sandbox record
	records     map[string]map[string]any // by id: fields that replace those of one record
	pingStatus  int                       // execd's /ping answers this (0: 200, ready)

	mu       sync.Mutex
	requests []string // "METHOD /path?query"
	created  []map[string]any
}

func newFakeServer(t *testing.T, ids ...string) *fakeServer {
	fs := &fakeServer{ids: ids, pauseStatus: http.StatusBadGateway}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sandboxes", fs.create)
	mux.HandleFunc("GET /v1/sandboxes", fs.list)
	mux.HandleFunc("GET /v1/sandboxes/{id}", fs.get)
	mux.HandleFunc("DELETE /v1/sandboxes/{id}", fs.known(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	mux.HandleFunc("POST /v1/sandboxes/{id}/pause", fs.known(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(fs.pauseStatus)
		io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1></body></html>")
	}))
	mux.HandleFunc("GET /v1/sandboxes/{id}/endpoints/{port}", fs.known(func(w http.ResponseWriter, r *http.Request) {
		// A path prefix, as Docker bridge endpoints have, must survive.
		writeJSONBody(w, http.StatusOK, map[string]any{
			"endpoint": strings.TrimPrefix(fs.URL, "http://") + "/proxy/" + r.PathValue("port"),
			"headers":  map[string]string{"X-Fake-Route": r.PathValue("id")},
		})
	}))
	mux.HandleFunc("GET /proxy/44772/ping", func(w http.ResponseWriter, r *http.Request) {
		if fs.pingStatus != 0 {
			w.WriteHeader(fs.pingStatus)
		}
	})
	mux.HandleFunc("GET /proxy/44772/metrics/watch", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, l := range fs.watchLines {
			io.WriteString(w, l+"\n")
		}
	})
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.mu.Lock()
		line := r.Method + " " + r.URL.Path
		if r.URL.RawQuery != "" {
			line += "?" + r.URL.RawQuery
		}
		if h := r.Header.Get("X-Fake-Route"); h != "" {
			line += " [X-Fake-Route: " + h + "]"
		}
		fs.requests = append(fs.requests, line)
		fs.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(fs.Close)
	return fs
}

// env returns an osb environment pointed at the fake server.
func (fs *fakeServer) env(t *testing.T) *cmdtest.Env {
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = fs.URL
	env.Vars["OPEN_SANDBOX_API_KEY"] = "fake-key"
	return env
}

func (fs *fakeServer) log() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]string(nil), fs.requests...)
}

// bodies are the create requests received, in order.
func (fs *fakeServer) bodies() []map[string]any {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return slices.Clone(fs.created)
}

func (fs *fakeServer) known(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(fs.knownIDs(), r.PathValue("id")) {
			h(w, r)
			return
		}
		writeJSONBody(w, http.StatusNotFound, map[string]string{"code": "FAKE::SANDBOX_NOT_FOUND", "message": "Sandbox " + r.PathValue("id") + " not found."})
	}
}

func (fs *fakeServer) knownIDs() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return slices.Clone(fs.ids)
}

func (fs *fakeServer) sandbox(id string) map[string]any {
	sb := map[string]any{
		"id":         id,
		"status":     map[string]any{"state": "Running"},
		"entrypoint": []string{"tail", "-f", "/dev/null"},
		"createdAt":  "2026-01-01T00:00:00Z",
		"image":      map[string]any{"uri": "private.example/app:1", "auth": map[string]string{"username": "robot", "password": "hunter2"}},
	}
	maps.Copy(sb, fs.record)
	maps.Copy(sb, fs.records[id])
	return sb
}

func (fs *fakeServer) create(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	json.NewDecoder(r.Body).Decode(&body)
	fs.mu.Lock()
	fs.created = append(fs.created, body)
	id := fmt.Sprintf("fake-%d", len(fs.created))
	fs.ids = append(fs.ids, id)
	fs.mu.Unlock()
	writeJSONBody(w, http.StatusAccepted, fs.sandbox(id))
}

func (fs *fakeServer) get(w http.ResponseWriter, r *http.Request) {
	fs.known(func(w http.ResponseWriter, r *http.Request) {
		writeJSONBody(w, http.StatusOK, fs.sandbox(r.PathValue("id")))
	})(w, r)
}

func (fs *fakeServer) list(w http.ResponseWriter, r *http.Request) {
	ids := fs.knownIDs()
	page, size := 1, len(ids)
	if fs.paginate {
		page, _ = strconv.Atoi(r.URL.Query().Get("page"))
		size, _ = strconv.Atoi(r.URL.Query().Get("pageSize"))
	}
	if page == fs.failPage {
		writeJSONBody(w, http.StatusInternalServerError, map[string]any{"code": "BROKEN", "message": "page " + strconv.Itoa(page) + " failed"})
		return
	}
	start := min((page-1)*size, len(ids))
	end := min(start+size, len(ids))
	items := []map[string]any{}
	for _, id := range ids[start:end] {
		items = append(items, fs.sandbox(id))
	}
	pages := 1
	if size > 0 {
		pages = (len(ids) + size - 1) / size
	}
	writeJSONBody(w, http.StatusOK, map[string]any{"items": items, "pagination": map[string]any{
		"page": page, "pageSize": size, "totalItems": len(ids), "totalPages": pages, "hasNextPage": page < pages}})
}

func writeJSONBody(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
