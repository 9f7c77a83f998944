//go:build linux

package server_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// fillSandbox writes a varied tree into a sandbox's own areas: binary
// bytes, an empty file, odd modes, nested directories, symlinks (one
// relative, two pointing out of the sandbox) and a FIFO, which snapshots
// leave out.
func fillSandbox(t *testing.T, c *client, id string) {
	t.Helper()
	sb, ok := c.srv.Sandbox(id)
	if !ok {
		t.Fatalf("no sandbox %s", id)
	}
	root := sb.FS()
	binary := make([]byte, 0, 70000)
	for i := range 70000 {
		binary = append(binary, byte(i*7))
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(root.WriteFile("workspace/hello.txt", []byte("hello\n"), 0o644))
	must(root.WriteFile("workspace/bin.dat", binary, 0o600))
	must(root.WriteFile("workspace/empty", nil, 0o644))
	must(root.WriteFile("workspace/run.sh", []byte("#!/bin/sh\necho hi\n"), 0o755))
	must(root.Chmod("workspace/run.sh", 0o755|fs.ModeSetuid))
	must(root.MkdirAll("workspace/nested/deep/dir", 0o750))
	must(root.WriteFile("workspace/nested/deep/dir/file.txt", []byte("deep\x00\xff"), 0o640))
	must(root.Mkdir("workspace/locked", 0o500))
	must(root.Symlink("hello.txt", "workspace/link"))
	must(root.Symlink("/etc", "workspace/escape"))
	must(root.Symlink("/etc/passwd", "workspace/passwd"))
	must(root.WriteFile("tmp/t.txt", []byte("tmp file"), 0o666))
	must(root.WriteFile("root/.profile", []byte("export X=1\n"), 0o600))
	must(syscall.Mkfifo(filepath.Join(sb.FSDir(), "workspace", "fifo"), 0o644))
}

// treeOf describes every entry under dir: type, mode, size and content hash
// or link target.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			desc += fmt.Sprintf(" %d %x", len(b), sha256.Sum256(b))
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// settledSnapshot polls a snapshot until it is no longer Creating.
func settledSnapshot(t *testing.T, c *client, id string) map[string]any {
	t.Helper()
	var m map[string]any
	if !eventually(t, 60*time.Second, func() bool {
		m = c.expect(200, c.do("GET", "/snapshots/"+id, nil)).json(t)
		return m["status"].(map[string]any)["state"] != "Creating"
	}) {
		t.Fatalf("snapshot %s still Creating", id)
	}
	return m
}

func stateOf(m map[string]any) string { return m["status"].(map[string]any)["state"].(string) }

func snapshotOf(t *testing.T, c *client, sandboxID string, body any) string {
	t.Helper()
	return c.expect(202, c.do("POST", "/sandboxes/"+sandboxID+"/snapshots", body)).json(t)["id"].(string)
}

func TestSnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	src := c.create(map[string]any{"entrypoint": []string{"sleep", "3600"}})
	fillSandbox(t, c, src)

	r := c.expect(202, c.do("POST", "/sandboxes/"+src+"/snapshots", map[string]string{"name": "first"}))
	m := r.json(t)
	id := m["id"].(string)
	if stateOf(m) != "Creating" || m["sandboxId"] != src || m["name"] != "first" || m["createdAt"] == nil {
		t.Fatalf("create answer %s", r.body)
	}
	if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/v1/snapshots/"+id) {
		t.Errorf("Location %q", loc)
	}
	m = settledSnapshot(t, c, id)
	if stateOf(m) != "Ready" || !strings.Contains(fmt.Sprint(m["status"]), "1 entries were left out") {
		t.Fatalf("snapshot %v", m["status"])
	}

	// Restore without an entrypoint: the files and the source's entrypoint come back.
	restored := c.expect(202, c.do("POST", "/sandboxes", map[string]any{"snapshotId": id, "timeout": 600,
		"resourceLimits": map[string]string{"cpu": "1"}})).json(t)["id"].(string)
	info := c.expect(200, c.do("GET", "/sandboxes/"+restored, nil)).json(t)
	if info["snapshotId"] != id || fmt.Sprint(info["entrypoint"]) != "[sleep 3600]" || info["image"] != nil {
		t.Errorf("restored sandbox %v", info)
	}
	srcSB, _ := c.srv.Sandbox(src)
	dstSB, _ := c.srv.Sandbox(restored)
	want, got := treeOf(t, srcSB.FSDir()), treeOf(t, dstSB.FSDir())
	delete(want, filepath.Join("workspace", "fifo"))
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			t.Errorf("%s: restored %q, source %q", k, got[k], want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: restored but not in the source", k)
		}
	}
	// The symlinks pointing out were copied as links, never followed.
	if fi, err := os.Lstat(filepath.Join(c.srv.DataDir(), "snapshots", id, "fs", "workspace", "passwd")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("snapshot holds passwd as %v, %v", fi, err)
	}
	// An explicit entrypoint wins.
	other := c.expect(202, c.do("POST", "/sandboxes", map[string]any{"snapshotId": id, "entrypoint": []string{"tail", "-f", "/dev/null"},
		"resourceLimits": map[string]string{"cpu": "1"}})).json(t)["id"].(string)
	if ep := c.expect(200, c.do("GET", "/sandboxes/"+other, nil)).json(t)["entrypoint"]; fmt.Sprint(ep) != "[tail -f /dev/null]" {
		t.Errorf("entrypoint %v", ep)
	}

	c.expect(204, c.do("DELETE", "/snapshots/"+id, nil))
	if _, err := os.Stat(filepath.Join(c.srv.DataDir(), "snapshots", id)); !os.IsNotExist(err) {
		t.Errorf("snapshot files remain: %v", err)
	}
	if r := c.expect(404, c.do("GET", "/snapshots/"+id, nil)); !strings.HasSuffix(r.code(), "SNAPSHOT::NOT_FOUND") {
		t.Errorf("get deleted: %s", r.body)
	}
	c.expect(404, c.do("DELETE", "/snapshots/"+id, nil))
	c.expect(404, c.do("POST", "/sandboxes", map[string]any{"snapshotId": id, "resourceLimits": map[string]string{"cpu": "1"}}))
}

func TestSnapshotRequests(t *testing.T) {
	t.Parallel()
	c := newClient(t, servertest.NoIsolation)
	a := c.create(nil)
	b := c.create(nil)
	refused := []struct {
		name   string
		path   string
		body   any
		status int
		check  string
	}{
		{"unknown sandbox", "/sandboxes/nope/snapshots", nil, 404, "SANDBOX_NOT_FOUND"},
		{"empty name", "/sandboxes/" + a + "/snapshots", map[string]string{"name": ""}, 422, "string_too_short"},
		{"extra field", "/sandboxes/" + a + "/snapshots", map[string]string{"label": "x"}, 422, "extra_forbidden"},
		{"name not a string", "/sandboxes/" + a + "/snapshots", map[string]any{"name": 3}, 422, "string_type"},
		{"not an object", "/sandboxes/" + a + "/snapshots", "[1]", 422, "detail"},
	}
	for _, tc := range refused {
		r := c.do("POST", tc.path, tc.body)
		if r.status != tc.status || !strings.Contains(string(r.body), tc.check) {
			t.Errorf("%s: %d %s; want %d containing %s", tc.name, r.status, r.body, tc.status, tc.check)
		}
	}
	c.expect(202, c.do("POST", "/sandboxes/"+b+"/pause", nil))
	if r := c.expect(409, c.do("POST", "/sandboxes/"+b+"/snapshots", nil)); r.code() != "SNAPSHOT::INVALID_SOURCE_STATE" {
		t.Errorf("paused source: %s", r.body)
	}
	c.expect(202, c.do("POST", "/sandboxes/"+b+"/resume", nil))

	s1 := snapshotOf(t, c, a, nil) // no body at all: unnamed
	s2 := snapshotOf(t, c, b, map[string]string{"name": "n2"})
	settledSnapshot(t, c, s1)
	settledSnapshot(t, c, s2)
	s3 := snapshotOf(t, c, a, map[string]string{"name": "n2"})
	settledSnapshot(t, c, s3)
	if m := c.expect(200, c.do("GET", "/snapshots/"+s1, nil)).json(t); m["name"] != nil {
		t.Errorf("unnamed snapshot has name %v", m["name"])
	}
	ids := func(query string) string {
		t.Helper()
		r := c.expect(200, c.do("GET", "/snapshots"+query, nil)).json(t)
		var out []string
		for _, it := range r["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		return strings.Join(out, ",")
	}
	checks := map[string]string{
		"":                                  s1 + "," + s2 + "," + s3,
		"?sandboxId=" + a:                   s1 + "," + s3,
		"?name=n2":                          s2 + "," + s3,
		"?name=n2&sandboxId=" + b:           s2,
		"?state=Ready":                      s1 + "," + s2 + "," + s3,
		"?state=ready&state=Failed":         s1 + "," + s2 + "," + s3,
		"?state=Failed":                     "",
		"?page=2&pageSize=2":                s3,
		"?sandboxId=nope":                   "",
		"?name=n2&state=Creating":           "",
		"?page=1&pageSize=1&sandboxId=" + a: s1,
	}
	for q, want := range checks {
		if got := ids(q); got != want {
			t.Errorf("GET /snapshots%s = %s; want %s", q, got, want)
		}
	}
	page := c.expect(200, c.do("GET", "/snapshots?pageSize=2", nil)).json(t)["pagination"].(map[string]any)
	if page["hasNextPage"] != true || page["totalPages"] != 2.0 || page["totalItems"] != 3.0 {
		t.Errorf("pagination %v", page)
	}
	c.expect(422, c.do("GET", "/snapshots?pageSize=201", nil))
	c.expect(422, c.do("GET", "/snapshots?page=0", nil))
	// A snapshot outlives its source.
	c.expect(204, c.do("DELETE", "/sandboxes/"+a, nil))
	c.expect(200, c.do("GET", "/snapshots/"+s1, nil))
}

func TestSnapshotsSurviveARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	withDir := func(o *server.Options) { o.DataDir, o.NoIsolation = dir, true }
	c := newClient(t, withDir)
	src := c.create(nil)
	sb, _ := c.srv.Sandbox(src)
	if err := sb.FS().WriteFile("workspace/kept.txt", []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	snap := snapshotOf(t, c, src, map[string]string{"name": "keep"})
	settledSnapshot(t, c, snap)
	tpl := createTemplate(t, c, map[string]any{"image": "python:3.11", "publish": "s3://b/p"})
	settledTemplate(t, c, tpl)
	if err := c.srv.Close(); err != nil {
		t.Fatal(err)
	}
	// A capture a crash interrupted comes back Failed.
	torn := filepath.Join(dir, "snapshots", "snap_torn")
	os.MkdirAll(filepath.Join(torn, "fs", "workspace"), 0o700)
	os.WriteFile(filepath.Join(torn, "snapshot.json"), []byte(`{"id":"snap_torn","sandboxId":"x","status":{"state":"Creating","lastTransitionAt":"2026-01-01T00:00:00.000000Z"},"createdAt":"2026-01-01T00:00:00.000000Z","entrypoint":null}`), 0o600)

	c2 := &client{t: t, srv: servertest.Start(t, withDir), key: servertest.APIKey}
	c2.base = c2.srv.URL() + "/v1"
	if m := c2.expect(200, c2.do("GET", "/snapshots/"+snap, nil)).json(t); stateOf(m) != "Ready" || m["name"] != "keep" {
		t.Errorf("snapshot after restart %v", m)
	}
	if m := c2.expect(200, c2.do("GET", "/snapshots/snap_torn", nil)).json(t); stateOf(m) != "Failed" {
		t.Errorf("interrupted snapshot %v", m)
	}
	if _, err := os.Stat(filepath.Join(torn, "fs")); !os.IsNotExist(err) {
		t.Errorf("partial files of the interrupted snapshot remain: %v", err)
	}
	if m := c2.expect(200, c2.do("GET", "/templates/"+tpl, nil)).json(t); phaseOf(m) != "Succeeded" {
		t.Errorf("template after restart %v", m)
	}
	c2.expect(404, c2.do("GET", "/sandboxes/"+src, nil))
	id := c2.expect(202, c2.do("POST", "/sandboxes", map[string]any{"snapshotId": snap, "resourceLimits": map[string]string{"cpu": "1"}})).json(t)["id"].(string)
	restored, _ := c2.srv.Sandbox(id)
	if b, err := restored.FS().ReadFile("workspace/kept.txt"); err != nil || string(b) != "kept" {
		t.Errorf("restored file %q, %v", b, err)
	}
	if r := c2.expect(409, c2.do("POST", "/sandboxes", map[string]any{"snapshotId": "snap_torn", "resourceLimits": map[string]string{"cpu": "1"}})); !strings.HasSuffix(r.code(), "SNAPSHOT::NOT_READY") {
		t.Errorf("restore of a failed snapshot: %s", r.body)
	}
}
