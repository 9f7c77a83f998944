package e2e

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A copy of a tree killed part way (SIGKILL: nothing of osb runs after it)
// leaves no part of the tree at its target, only a hidden staging
// directory; the next copy into the same directory removes it.
func TestKilledTreeCopyLeavesNoPartOfTheTree(t *testing.T) {
	t.Parallel()
	bin, env := startServer(t)
	id := strings.TrimSpace(osb(t, bin, env, "sandbox", "create", "-i", "python:3.11", "-q", "id").expect(t, 0, "sandbox create").stdout)
	osb(t, bin, env, "command", "run", id, "--", "sh", "-c",
		"mkdir /workspace/tree && cd /workspace/tree && for i in $(seq 300); do head -c 4096 /dev/urandom >f$i; done").expect(t, 0, "command run")

	// Through a proxy that stops passing the server's answers on after
	// 300 KiB: the tar stream (about 1.3 MiB) stalls part way.
	proxy := holdingProxy(t, serverAddr(env), 300<<10)
	dest := t.TempDir()
	target := filepath.Join(dest, "copy")
	cp := command(t, bin, "cp", id+":/workspace/tree", target)
	cp.Env = withEnv(env, "OPEN_SANDBOX_DOMAIN", proxy)
	if err := cp.Start(); err != nil {
		t.Fatal(err)
	}
	staged := waitForStagedFile(t, dest, target)
	cp.Process.Kill()
	cp.Wait()
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("%s exists after the copy was killed (%v)", target, err)
	}
	if entries, _ := os.ReadDir(dest); len(entries) != 1 || entries[0].Name() != staged {
		t.Errorf("%s holds %v, want only the staging directory %s", dest, entries, staged)
	}

	again := filepath.Join(dest, "again")
	osb(t, bin, env, "cp", id+":/workspace/tree", again).expect(t, 0, "cp")
	entries, _ := os.ReadDir(dest)
	if len(entries) != 1 || entries[0].Name() != "again" {
		t.Errorf("%s holds %v after the next copy, want only again", dest, entries)
	}
	if files, _ := os.ReadDir(again); len(files) != 300 {
		t.Errorf("the next copy holds %d files, want 300", len(files))
	}
}

// waitForStagedFile waits until a hidden staging directory in dir holds a
// file of the tree being copied to target, and returns its name. The test
// fails at once when target appears first.
func waitForStagedFile(t *testing.T, dir, target string) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Lstat(target); err == nil {
			t.Fatalf("%s appeared while the copy was still running", target)
		}
		stages, _ := filepath.Glob(filepath.Join(dir, ".osb-download-*"))
		for _, s := range stages {
			if files, _ := os.ReadDir(filepath.Join(s, "tree")); len(files) > 0 {
				return filepath.Base(s)
			}
		}
	}
	t.Fatalf("no staged file appeared in %s within a minute", dir)
	return ""
}

// holdingProxy is a reverse proxy to the server at addr that passes on
// only the first limit bytes of the answers' bodies, over all its
// requests, and then holds the rest until the client goes away. The
// endpoints it hands out lead through it too: the server's own lead
// straight to the server, past the proxy. It returns its address.
func holdingProxy(t *testing.T, addr string, limit int64) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	self := ln.Addr().String()
	quota := &heldQuota{left: limit}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: "http", Host: addr}) },
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if !strings.Contains(resp.Request.URL.Path, "/endpoints/") {
				resp.Body = holding(resp.Request.Context(), resp.Body, quota)
				return nil
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			body = bytes.ReplaceAll(body, []byte(addr), []byte(self))
			resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
			return nil
		},
	}
	srv := &http.Server{Handler: proxy}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return self
}

// heldQuota is what a holdingProxy still passes on.
type heldQuota struct {
	mu   sync.Mutex
	left int64
}

// take reserves up to n bytes of the quota; add gives back what a read
// did not use.
func (q *heldQuota) take(n int) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = int(min(int64(n), q.left))
	q.left -= int64(n)
	return n
}

func (q *heldQuota) add(n int) {
	q.mu.Lock()
	q.left += int64(n)
	q.mu.Unlock()
}

// heldBody is an answer's body that ends in a wait once the quota is
// spent, until the request is over or the body closed.
type heldBody struct {
	io.ReadCloser
	quota  *heldQuota
	ctx    context.Context
	closed chan struct{}
	once   sync.Once
}

// heldConn is an upgraded connection (101) whose answers are held: the
// proxy writes to it as well.
type heldConn struct {
	*heldBody
	io.Writer
}

// holding wraps body, keeping it writable where it is an upgraded
// connection.
func holding(ctx context.Context, body io.ReadCloser, quota *heldQuota) io.ReadCloser {
	b := &heldBody{ReadCloser: body, quota: quota, ctx: ctx, closed: make(chan struct{})}
	if w, ok := body.(io.Writer); ok {
		return heldConn{b, w}
	}
	return b
}

func (b *heldBody) Read(p []byte) (int, error) {
	if n := b.quota.take(len(p)); n > 0 {
		m, err := b.ReadCloser.Read(p[:n])
		b.quota.add(n - m)
		return m, err
	}
	select {
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	case <-b.closed:
		return 0, net.ErrClosed
	}
}

func (b *heldBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return b.ReadCloser.Close()
}

// serverAddr is the address env points osb at.
func serverAddr(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OPEN_SANDBOX_DOMAIN="); ok {
			return v
		}
	}
	return ""
}

// withEnv is env with key set to value.
func withEnv(env []string, key, value string) []string {
	out := []string{key + "=" + value}
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}
