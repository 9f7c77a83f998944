package snapshot_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server/servertest"
)

func newEnv(t *testing.T) *cmdtest.Env {
	t.Helper()
	return cmdtest.New(t, servertest.NoIsolation)
}

type wireSnapshot struct {
	ID, SandboxID, Name string
	Status              struct{ State, Message string }
}

func serverSnapshots(t *testing.T, env *cmdtest.Env) []wireSnapshot {
	t.Helper()
	var list struct{ Items []wireSnapshot }
	env.APIGet("/snapshots", &list)
	return list.Items
}

// snapshot takes a snapshot through osb, waiting for it, and returns its id.
func snapshot(t *testing.T, env *cmdtest.Env, sandboxID string, args ...string) string {
	t.Helper()
	out := env.Must(append([]string{"snapshot", "create", sandboxID, "--wait", "-o", "json"}, args...)...)
	var v struct{ ID, Status string }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Status != "Ready" {
		t.Fatalf("snapshot create --wait: %v\n%s", err, out)
	}
	return v.ID
}

// norm normalizes ids and times, and in tables the column padding (a
// timestamp's width varies with its fraction).
func norm(s, format string, ids map[string]string) string {
	s = cmdtest.Normalize(s, ids)
	if format == "table" {
		s = cmdtest.Squeeze(s)
	}
	return s
}

func TestCreateFormats(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	sb := env.NewSandbox()
	for _, format := range []string{"table", "json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			// The answer to the create itself always says Creating.
			r := env.Run("snapshot", "create", sb, "--name", "n-"+format, "-o", format).ExpectCode(t, 0)
			all := serverSnapshots(t, env)
			id := all[len(all)-1].ID
			cmdtest.Golden(t, "create_"+format, norm(r.Combined(), format, map[string]string{id: "<SNAP>", sb: "<SB>"}))
			settle(t, env, id) // a sandbox takes one snapshot at a time
		})
	}
	// A unique prefix of the sandbox id is enough; no name is fine.
	r := env.Run("snapshot", "create", sb[:8], "--wait").ExpectCode(t, 0)
	all := serverSnapshots(t, env)
	cmdtest.Golden(t, "create_wait_table", norm(r.Combined(), "table", map[string]string{all[len(all)-1].ID: "<SNAP>", sb: "<SB>"}))
}

// settle polls a snapshot (through osb) until it is no longer Creating.
func settle(t *testing.T, env *cmdtest.Env, id string) {
	t.Helper()
	cmdtest.Eventually(t, "snapshot "+id+" settled", func() bool {
		var v struct{ Status struct{ State string } }
		json.Unmarshal([]byte(env.Must("snapshot", "get", id, "-o", "json")), &v)
		return v.Status.State != "Creating"
	})
}

func TestCreateErrors(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	sb := env.NewSandbox()
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"empty name", []string{"snapshot", "create", sb, "--name", ""}, 2, "--name must not be empty"},
		{"zero wait timeout", []string{"snapshot", "create", sb, "--wait-timeout", "0"}, 2, "--wait-timeout must be more than 0"},
		{"bad wait timeout", []string{"snapshot", "create", sb, "--wait-timeout", "soon"}, 2, "invalid duration 'soon'"},
		{"no sandbox id", []string{"snapshot", "create"}, 2, "missing SANDBOX_ID"},
		{"unknown sandbox", []string{"snapshot", "create", "nope"}, 4, "Sandbox nope not found."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env.Run(tc.args...).ExpectError(t, tc.code, tc.want)
		})
	}
	env.Must("sandbox", "pause", sb)
	env.Run("snapshot", "create", sb).ExpectError(t, 1, "a snapshot needs it Running")
	if n := len(serverSnapshots(t, env)); n != 0 {
		t.Errorf("refused commands created %d snapshots", n)
	}
}

func TestWaitForAFailedSnapshot(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	sb := env.NewSandbox()
	// Deeper than a capture goes: the snapshot fails.
	runtime, _ := env.Server.Sandbox(sb)
	if err := runtime.FS().MkdirAll("workspace/"+strings.Repeat("d/", 300), 0o755); err != nil {
		t.Fatal(err)
	}
	r := env.Run("snapshot", "create", sb, "--wait", "-o", "json").ExpectCode(t, 1)
	var panel struct{ ID, Status string }
	if err := json.Unmarshal([]byte(r.Stdout), &panel); err != nil || panel.Status != "Failed" {
		t.Errorf("stdout %q: %v", r.Stdout, err)
	}
	if !strings.Contains(r.Stderr, `"message": "snapshot `+panel.ID+` failed: `) || !strings.Contains(r.Stderr, "nested deeper than 256 levels") {
		t.Errorf("stderr %s", r.Stderr)
	}
}

// A server whose snapshot never settles: --wait gives up with exit 5.
func TestWaitTimesOut(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.Method {
		case http.MethodPost:
			w.WriteHeader(http.StatusAccepted)
		case http.MethodDelete:
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"code":"SNAPSHOT::IN_PROGRESS","message":"Snapshot snap_1 is still being created."}`))
			return
		}
		w.Write([]byte(`{"id":"snap_1","sandboxId":"sb1","status":{"state":"Creating"},"createdAt":"2026-01-01T00:00:00Z"}`))
	}))
	defer srv.Close()
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = srv.URL
	r := env.Run("snapshot", "create", "sb1", "--wait-timeout", "1s").ExpectCode(t, 5)
	if !strings.Contains(r.Stdout, "  id: snap_1\n") || !strings.Contains(r.Stdout, "  status: Creating\n") {
		t.Errorf("stdout %q", r.Stdout)
	}
	if r.Stderr != "Error: snapshot snap_1 was not Ready within 1s (it is Creating)\n" {
		t.Errorf("stderr %q", r.Stderr)
	}
	env.Run("snapshot", "delete", "snap_1").ExpectError(t, 1, "Snapshot snap_1 is still being created. (HTTP 409, code SNAPSHOT::IN_PROGRESS")
	mu.Lock()
	defer mu.Unlock()
	if requests[0] != "POST /v1/sandboxes/sb1/snapshots" || len(requests) < 2 || requests[1] != "GET /v1/snapshots/snap_1" {
		t.Errorf("requests %v", requests)
	}
}

func TestGetListDelete(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	if r := env.Run("snapshot", "list"); r.Code != 0 || r.Stdout != "INFO: No snapshots found.\n" {
		t.Errorf("empty list: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	cmdtest.Golden(t, "list_empty_yaml", env.Must("snapshot", "list", "-o", "yaml"))
	a := env.NewSandbox()
	b := env.NewSandbox()
	s1 := snapshot(t, env, a, "--name", "first")
	s2 := snapshot(t, env, b)
	ids := map[string]string{a: "<SB_A>", b: "<SB_B>", s1: "<SNAP_1>", s2: "<SNAP_2>"}
	for _, format := range []string{"table", "json", "yaml"} {
		cmdtest.Golden(t, "get_"+format, norm(env.Must("snapshot", "get", s1, "-o", format), format, ids))
		cmdtest.Golden(t, "list_"+format, norm(env.Must("snapshot", "list", "-o", format), format, ids))
	}
	filters := map[string][]string{
		s1:            {"--sandbox-id", a},
		s1 + "," + s2: {"--state", "Ready", "--state", "Failed"},
		"":            {"--state", "Creating"},
		s2:            {"--page", "2", "--page-size", "1"},
		s1 + ",":      {"--name", "first"},
	}
	for want, args := range filters {
		var list struct{ Items []struct{ ID string } }
		json.Unmarshal([]byte(env.Must(append([]string{"snapshot", "list", "-o", "json"}, args...)...)), &list)
		var got []string
		for _, it := range list.Items {
			got = append(got, it.ID)
		}
		if g := strings.Join(got, ","); g != strings.TrimSuffix(want, ",") {
			t.Errorf("list %v = %s; want %s", args, g, want)
		}
	}
	env.Run("snapshot", "list", "--page", "0").ExpectError(t, 2, "--page must be at least 1, got 0")
	env.Run("snapshot", "list", "--page-size", "0").ExpectError(t, 2, "--page-size must be at least 1, got 0")

	if r := env.Run("snapshot", "delete", s1).ExpectCode(t, 0); r.Stdout != "OK: Snapshot deleted: "+s1+"\n" {
		t.Errorf("delete said %q", r.Stdout)
	}
	if out := env.Must("snapshot", "delete", s2, "-o", "yaml"); out != "message: 'Snapshot deleted: "+s2+"'\nstatus: ok\n" {
		t.Errorf("delete -o yaml said %q", out)
	}
	env.Run("snapshot", "get", s1).ExpectError(t, 4, "Snapshot "+s1+" not found")
	env.Run("snapshot", "delete", s1, "-o", "json").ExpectCode(t, 4)
	if n := len(serverSnapshots(t, env)); n != 0 {
		t.Errorf("%d snapshots left", n)
	}
}

// The files written into a sandbox through osb come back byte for byte in
// a sandbox restored from its snapshot. The default server isolates
// sandboxes where the machine allows it.
func TestSnapshotRestoreRoundTrip(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	src := env.NewSandbox("--entrypoint", "sleep", "--entrypoint", "3600")
	local := t.TempDir()
	binary := make([]byte, 300000)
	for i := range binary {
		binary[i] = byte(i * 31 % 251)
	}
	binary[0], binary[1] = 0x00, 0xff
	binPath := filepath.Join(local, "blob.bin")
	if err := os.WriteFile(binPath, binary, 0o600); err != nil {
		t.Fatal(err)
	}
	env.Must("file", "write", src, "/workspace/notes.txt", "-c", "line one\nline two\n", "--mode", "640")
	env.Must("file", "mkdir", src, "/workspace/nested/deep")
	env.Must("file", "upload", src, binPath, "/workspace/nested/deep/blob.bin")
	env.Must("file", "write", src, "/tmp/scratch", "-c", "in tmp")
	env.Must("command", "run", src, "--", "ln", "-s", "nested/deep/blob.bin", "/workspace/link")

	snap := snapshot(t, env, src, "--name", "round-trip")
	var created struct {
		ID         string
		SnapshotID string `json:"snapshot_id"`
	}
	out := env.Must("sandbox", "create", "--snapshot-id", snap, "-o", "json")
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.SnapshotID != snap {
		t.Fatalf("create from snapshot: %v\n%s", err, out)
	}
	dst := created.ID

	got := filepath.Join(local, "back.bin")
	env.Must("file", "download", dst, "/workspace/nested/deep/blob.bin", got)
	if b, err := os.ReadFile(got); err != nil || !bytes.Equal(b, binary) {
		t.Errorf("blob.bin came back with %d bytes (%v), want %d identical bytes", len(b), err, len(binary))
	}
	if out := env.Must("file", "cat", dst, "/workspace/notes.txt"); out != "line one\nline two\n" {
		t.Errorf("notes.txt = %q", out)
	}
	if out := env.Must("file", "cat", dst, "/tmp/scratch"); out != "in tmp" {
		t.Errorf("scratch = %q", out)
	}
	if out := env.Must("command", "run", dst, "--", "sh", "-c", "stat -c %a /workspace/notes.txt; readlink /workspace/link; cmp /workspace/link /workspace/nested/deep/blob.bin && echo same"); out != "640\nnested/deep/blob.bin\nsame\n" {
		t.Errorf("restored modes and link: %q", out)
	}
	// The new sandbox is independent: changing it leaves the source alone.
	env.Must("file", "write", dst, "/workspace/notes.txt", "-c", "changed")
	if out := env.Must("file", "cat", src, "/workspace/notes.txt"); out != "line one\nline two\n" {
		t.Errorf("source changed: %q", out)
	}
}

// A snapshot record without an id (an empty object, a listing) is an error
// in one line, exit 1, not a blank record; create --wait then polls
// nothing.
func TestRecordWithoutID(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{}`, `{"items":[],"pagination":{"page":1}}`} {
		env, addr, requests := cmdtest.Answering(t, body, http.StatusAccepted)
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"snapshot", "get", "snap_1"}, "Error: the server answered GET http://" + addr + "/v1/snapshots/snap_1 with a record without an id where a snapshot was expected (HTTP 200)\n"},
			{[]string{"snapshot", "create", "sb1", "--wait"}, "Error: the server answered POST http://" + addr + "/v1/sandboxes/sb1/snapshots with a record without an id where a snapshot was expected (HTTP 202)\n"},
		} {
			r := env.Run(tc.args...).ExpectCode(t, 1)
			if r.Stdout != "" || r.Stderr != tc.want {
				t.Errorf("%s %v: stdout %q stderr %q, want %q", body, tc.args, r.Stdout, r.Stderr, tc.want)
			}
		}
		r := env.Run("snapshot", "get", "snap_1", "-o", "json").ExpectCode(t, 1)
		if r.Stdout != "" || !strings.Contains(r.Stderr, `"exit_code": 1`) || !strings.Contains(r.Stderr, "where a snapshot was expected") {
			t.Errorf("-o json: stdout %q stderr %q", r.Stdout, r.Stderr)
		}
		if want := "GET /v1/snapshots/snap_1 POST /v1/sandboxes/sb1/snapshots GET /v1/snapshots/snap_1"; strings.Join(requests(), " ") != want {
			t.Errorf("requests %v, want %s", requests(), want)
		}
	}
}
