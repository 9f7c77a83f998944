//go:build linux

package server_test

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
)

func TestRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr, log cmdtest.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, server.Options{Listen: "127.0.0.1:0", APIKey: "k", DataDir: t.TempDir(), Log: &log}, &stderr)
	}()
	ready := regexp.MustCompile(`osb server listening on (http://127\.0\.0\.1:\d+)\n`)
	var url string
	eventually(t, time.Minute, func() bool {
		if m := ready.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			return true
		}
		return false
	})
	if url == "" {
		t.Fatalf("no ready line: %q", stderr.String())
	}
	resp, err := http.Get(url + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v", err)
	}
	resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return")
	}
	if !regexp.MustCompile(`GET /health 200 \S+ rid=\S+`).MatchString(log.String()) {
		t.Errorf("request log: %q", log.String())
	}
	if bytes.Contains([]byte(log.String()), []byte("k\n")) {
		t.Errorf("log may contain the key: %q", log.String())
	}
}
