//go:build linux

package execd

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

func get(t *testing.T, h http.Handler, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestPingAndUnknownRoutes(t *testing.T) {
	t.Parallel()
	h := New(newSandbox(t), Options{})
	if r := get(t, h, "/ping"); r.Code != 200 || r.Body.Len() != 0 {
		t.Errorf("ping: %d %q", r.Code, r.Body)
	}
	for _, path := range []string{"/nope", "/ping/x"} {
		if r := get(t, h, path); r.Code != 404 || r.Body.String() != "404 page not found\n" {
			t.Errorf("%s: %d %q", path, r.Code, r.Body)
		}
	}
	req := httptest.NewRequest("POST", "/ping", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 404 {
		t.Errorf("wrong method: %d, want 404 as execd", rec.Code)
	}
}

// HEAD is no method of execd: even on a GET route it is a plain-text 404,
// and the token is still checked first.
func TestHeadIsNotFound(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	for _, path := range []string{"/ping", "/files/download?path=/workspace/a.txt", "/metrics", "/nope"} {
		req := httptest.NewRequest(http.MethodHead, path, nil)
		rec := httptest.NewRecorder()
		New(sb, Options{}).ServeHTTP(rec, req)
		if rec.Code != 404 || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" || rec.Body.String() != "404 page not found\n" {
			t.Errorf("HEAD %s: %d %q %q", path, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
	}
	req := httptest.NewRequest(http.MethodHead, "/ping", nil)
	rec := httptest.NewRecorder()
	New(sb, Options{AccessToken: "tok"}).ServeHTTP(rec, req)
	if rec.Code != 401 {
		t.Errorf("HEAD without the token: %d, want 401", rec.Code)
	}
}

func TestAccessToken(t *testing.T) {
	t.Parallel()
	h := New(newSandbox(t), Options{AccessToken: "s3cret"})
	for _, path := range []string{"/ping", "/nope"} {
		r := get(t, h, path)
		var body map[string]string
		json.Unmarshal(r.Body.Bytes(), &body)
		if r.Code != 401 || body["error"] != "Unauthorized: invalid or missing header X-EXECD-ACCESS-TOKEN" {
			t.Errorf("%s without token: %d %s", path, r.Code, r.Body)
		}
	}
	if r := get(t, h, "/ping", "x-execd-access-token", "s3cret"); r.Code != 200 {
		t.Errorf("with token: %d", r.Code)
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	awaitMemoryUse(t, sb)
	h := New(sb, Options{MetricsInterval: 50 * time.Millisecond})
	before := time.Now().UnixMilli()
	r := get(t, h, "/metrics")
	var m metrics
	if err := json.Unmarshal(r.Body.Bytes(), &m); err != nil || r.Code != 200 {
		t.Fatalf("%d %s: %v", r.Code, r.Body, err)
	}
	if m.CPUCount < 1 || m.MemTotalMiB <= 0 || m.MemUsedMiB <= 0 || m.Timestamp < before || m.CPUUsedPct < 0 {
		t.Errorf("metrics %+v", m)
	}
}

// A sample's values are within their bounds while the sandbox works. How
// busy it looks depends on everything else the machine does, so only the
// bounds are checked.
func TestMetricsStayInBounds(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	cmd, err := sb.Command(t.Context(), sandbox.CommandSpec{Shell: "while :; do :; done"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Cancel(); cmd.Wait() }()
	awaitMemoryUse(t, sb)
	h := New(sb, Options{MetricsInterval: 300 * time.Millisecond})
	var m metrics
	if err := json.Unmarshal(get(t, h, "/metrics").Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.CPUCount < 1 || m.CPUUsedPct < 0 || m.CPUUsedPct > 100*m.CPUCount || m.MemTotalMiB <= 0 ||
		m.MemUsedMiB <= 0 || m.MemUsedMiB > m.MemTotalMiB || m.Timestamp <= 0 {
		t.Errorf("sample out of bounds: %+v", m)
	}
}

func TestMetricsWatchFraming(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	srv := httptest.NewServer(New(sb, Options{MetricsInterval: 50 * time.Millisecond}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics/watch")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("headers %v", resp.Header)
	}
	br := bufio.NewReader(resp.Body)
	for i := 0; i < 3; i++ {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil || len(m) != 5 {
			t.Errorf("frame %q: %v", line, err)
		}
	}
	// The stream ends when the sandbox is killed.
	sb.Kill()
	done := make(chan struct{})
	go func() {
		for {
			if _, err := br.ReadBytes('\n'); err != nil {
				close(done)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Error("watch stream still open after Kill")
	}
}
