package faults

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A 200 whose body is empty or null, where a record is expected, is an
// error that says so, not a blank record and exit 0.
func TestEmptyOrNullRecord(t *testing.T) {
	t.Parallel()
	for _, body := range []string{"", "null", "  \n"} {
		f := newFake(t)
		f.handle("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		})
		env := f.env()
		what := "an empty body"
		if body == "null" {
			what = "null"
		}
		r := env.Run("sandbox", "get", "sb-1")
		expect(t, r, 1, "Error: the server answered GET http://"+f.addr()+"/v1/sandboxes/sb-1 with "+what+" where a record was expected (HTTP 200)")
		oneLine(t, r)
		r = env.Run("sandbox", "get", "sb-1", "-o", "json")
		if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, `"message": "the server answered GET`) {
			t.Errorf("%q under -o json: exit %d stdout %q stderr %q", body, r.Code, r.Stdout, r.Stderr)
		}
	}
}

type zeros struct{}

// zeroBlock fills reads in blocks: a loop over every byte is slow under -race.
var zeroBlock = bytes.Repeat([]byte("0"), 32<<10)

func (zeros) Read(p []byte) (int, error) {
	for n := 0; n < len(p); {
		n += copy(p[n:], zeroBlock)
	}
	return len(p), nil
}

// A server (or proxy) that refuses an upload part-way with 413 and hangs
// up: osb reports the 413, not a connection that could not be made.
func TestUploadRefusedWith413(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("POST /sb/{id}/files/upload", func(w http.ResponseWriter, r *http.Request) {
		io.CopyN(io.Discard, r.Body, 1<<20)
		conn, buf := hijack(t, w)
		body := `{"code":"REQUEST_TOO_LARGE","message":"upload larger than 1 MiB"}`
		fmt.Fprintf(buf, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		buf.Flush()
		conn.Close() // with the rest of the upload unread: the client's next write fails
	})
	src := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(src, bytes.Repeat([]byte("x"), 64<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	env := f.env()
	for range 3 {
		r := env.Run("file", "upload", "sb-1", src, "/workspace/big.bin")
		expect(t, r, 1, "Error: upload larger than 1 MiB (HTTP 413, code REQUEST_TOO_LARGE)")
		oneLine(t, r)
	}
}

// A 429 whose Retry-After is longer than osb waits is reported as the 429
// it is, at once: not retried after an hour, not "timed out".
func TestTooManyRequestsWithALongRetryAfter(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	for _, after := range []string{"3600", "Wed, 21 Oct 2099 07:28:00 GMT"} {
		f.handle("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", after)
			writeJSON(w, 429, map[string]string{"code": "TOO_MANY_REQUESTS", "message": "Slow down."})
		})
		before := f.count("GET /v1/sandboxes/sb-1")
		r := f.env().Run("--request-timeout", "600", "sandbox", "get", "sb-1")
		expect(t, r, 1, "Error: Slow down. (HTTP 429, code TOO_MANY_REQUESTS, request id req-42, retry after ")
		oneLine(t, r)
		if n := f.count("GET /v1/sandboxes/sb-1") - before; n != 1 {
			t.Errorf("Retry-After %s: sent %d times, want 1", after, n)
		}
	}
	// A wait longer than what is left of the call's time is not waited
	// either: the 429 is the answer.
	f.handle("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "5")
		writeJSON(w, 429, map[string]string{"code": "TOO_MANY_REQUESTS", "message": "Slow down."})
	})
	expect(t, f.env().Run("--request-timeout", "2", "sandbox", "get", "sb-1"), 1, "Error: Slow down. (HTTP 429", "retry after 5s)")
}

// A listing whose pages never end is stopped: a page that repeats an
// earlier one, a page number other than the one asked for, more pages
// than any real listing has. Each ends in one line and exit 1.
func TestListingThatNeverEnds(t *testing.T) {
	t.Parallel()
	record := func(id string) map[string]any {
		return map[string]any{"id": id, "status": map[string]string{"state": "Running"}, "entrypoint": []string{"tail"}}
	}
	for _, tc := range []struct {
		name string
		page func(asked int) (items []any, number int)
		want string
		long bool // 5000 requests a walk: the listing alone walks it
	}{
		{"same page again", func(int) ([]any, int) { return []any{record("a"), record("b")}, 0 },
			"Error: stopped listing: page 2 holds the same records as page 1, and the server announces more", false},
		{"page number stuck", func(int) ([]any, int) { return []any{record("a")}, 1 },
			"Error: stopped listing: asked for page 2, the server sent page 1", false},
		{"pages that never end", func(n int) ([]any, int) { return []any{record(fmt.Sprint("sb-", n))}, n },
			"Error: stopped listing: the server still announces more after 5000 pages", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			var mu sync.Mutex
			asked := 0
			f.handle("GET /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
				var n int
				fmt.Sscan(r.URL.Query().Get("page"), &n)
				mu.Lock()
				asked = max(asked, n)
				mu.Unlock()
				items, number := tc.page(n)
				writeJSON(w, 200, map[string]any{"items": items,
					"pagination": map[string]any{"page": number, "pageSize": 200, "totalItems": 1 << 30, "totalPages": 1 << 22, "hasNextPage": true}})
			})
			r := f.env().Run("sandbox", "list", "--all", "-o", "yaml")
			if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "message: '"+strings.TrimPrefix(tc.want, "Error: ")+"'") {
				t.Errorf("exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
			}
			// The same stop for any walk of the listing: an id prefix.
			if !tc.long {
				expect(t, f.env().Run("sandbox", "get", "sb-"), 1, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if asked > 5000 {
				t.Errorf("page %d was asked for", asked)
			}
		})
	}
}
