package mcp_test

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	osbmcp "github.com/osb-dev/osb/internal/mcp"
)

func TestHTTPTransport(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	s, err := osbmcp.New(osbmcp.Options{Client: h.api})
	if err != nil {
		t.Fatal(err)
	}
	const token = "0123456789abcdef-token"
	web := httptest.NewServer(s.HTTPHandler(token))
	t.Cleanup(web.Close)
	url := web.URL + osbmcp.HTTPPath

	for _, auth := range []string{"", "Bearer wrong-token-0123456789", "Basic " + token, "Bearer " + token + "x"} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, resp.StatusCode)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hc := &http.Client{Transport: bearer{token}}
	session := h.connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc})
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "sandbox_create", Arguments: map[string]any{"image": "python:3.11"}})
	if err != nil || res.IsError {
		t.Fatalf("sandbox_create over HTTP: %v %v", err, res)
	}
	id := structured(t, res)["sandbox_id"].(string)
	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "command_run", Arguments: map[string]any{"sandbox_id": id, "command": "echo over-http"}})
	if err != nil || res.IsError || stdout(structured(t, res)) != msgs("over-http") {
		t.Fatalf("command_run over HTTP: %v %v", err, res)
	}
	if resp, err := http.Get(web.URL + "/other"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("another path: %v %v", resp, err)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stored := filepath.Join(dir, "sub", osbmcp.TokenFile)
	token, from, err := osbmcp.TokenSource{Stored: stored, APIKey: "key"}.Resolve()
	if err != nil || len(token) < 40 || from != stored {
		t.Fatalf("generated %q from %s: %v", token, from, err)
	}
	info, err := os.Stat(stored)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("stored token file %v %v", info, err)
	}
	again, _, err := osbmcp.TokenSource{Stored: stored}.Resolve()
	if err != nil || again != token {
		t.Errorf("the stored token is not reused: %q %v", again, err)
	}

	env, from, err := osbmcp.TokenSource{Env: "an-env-token-of-some-length", Stored: filepath.Join(dir, "unused")}.Resolve()
	if err != nil || env != "an-env-token-of-some-length" || from != "$OSB_MCP_TOKEN" {
		t.Errorf("env token %q from %s: %v", env, from, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "unused")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a token was stored although one was given: %v", err)
	}

	file := filepath.Join(dir, "given")
	os.WriteFile(file, []byte("file-token-0123456789\n"), 0o600)
	if got, _, err := (osbmcp.TokenSource{File: file, Env: "ignored-env-token-123"}.Resolve()); err != nil || got != "file-token-0123456789" {
		t.Errorf("file token %q %v", got, err)
	}
	for _, c := range []struct {
		src  osbmcp.TokenSource
		want string
	}{
		{osbmcp.TokenSource{Env: "short"}, "shorter than 16"},
		{osbmcp.TokenSource{Env: "the-api-key-itself-0123", APIKey: "the-api-key-itself-0123"}, "is the OpenSandbox API key"},
		{osbmcp.TokenSource{File: filepath.Join(dir, "missing")}, "no such file"},
	} {
		if _, _, err := c.src.Resolve(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.src, err, c.want)
		}
	}
	os.Chmod(file, 0o644)
	if _, _, err := (osbmcp.TokenSource{File: file}.Resolve()); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a token file others can read: %v", err)
	}
}
