package mcp_test

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/client"
	osbmcp "github.com/osb-dev/osb/internal/mcp"
	"github.com/osb-dev/osb/internal/ops"
)

// The whole life of a sandbox through the official tools.
func TestSandboxLifecycle(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	id := h.create(map[string]any{"metadata": map[string]any{"team": "mcp"}, "env": map[string]any{"GREETING": "hi"}})

	sb, err := h.api.GetSandbox(context.Background(), id)
	if err != nil || sb.Status.State != "Running" || sb.Metadata["team"] != "mcp" {
		t.Fatalf("the server has %+v (%v), want a Running sandbox labelled team=mcp", sb, err)
	}
	info := h.ok("sandbox_get_info", map[string]any{"sandbox_id": id})
	if info["id"] != id || info["status"].(map[string]any)["state"] != "Running" || info["image"].(map[string]any)["image"] != "python:3.11" {
		t.Errorf("sandbox_get_info: %v", info)
	}

	page := h.ok("sandbox_list", map[string]any{"filter": map[string]any{"metadata": map[string]any{"team": "mcp"}}})
	items := page["sandbox_infos"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["id"] != id || page["pagination"].(map[string]any)["total_items"] != float64(1) {
		t.Errorf("sandbox_list: %v", page)
	}
	if page := h.ok("sandbox_list", map[string]any{"filter": map[string]any{"metadata": map[string]any{"team": "other"}}}); len(page["sandbox_infos"].([]any)) != 0 {
		t.Errorf("sandbox_list with another label: %v", page)
	}

	before := time.Now()
	renewed := h.ok("sandbox_renew", map[string]any{"sandbox_id": id, "timeout_seconds": 7200})
	at, err := time.Parse(time.RFC3339, renewed["expires_at"].(string))
	if err != nil || at.Before(before.Add(7199*time.Second)) || at.After(time.Now().Add(7201*time.Second)) {
		t.Errorf("sandbox_renew: %v (%v)", renewed, err)
	}

	if ex := h.ok("command_run", map[string]any{"sandbox_id": id, "command": "echo $GREETING"}); stdout(ex) != msgs("hi") || stderr(ex) != msgs() {
		t.Errorf("the sandbox's env: %v", ex)
	}
	if got := h.ok("sandbox_healthcheck", map[string]any{"sandbox_id": id}); got["healthy"] != true || got["sandbox_id"] != id {
		t.Errorf("sandbox_healthcheck: %v", got)
	}
	m := h.ok("sandbox_get_metrics", map[string]any{"sandbox_id": id})
	if m["cpu_count"].(float64) <= 0 || m["memory_total_in_mib"].(float64) <= 0 || m["timestamp"].(float64) <= 0 {
		t.Errorf("sandbox_get_metrics: %v", m)
	}
	ep := h.ok("sandbox_get_endpoint", map[string]any{"sandbox_id": id, "port": 8000})
	if e, _ := ep["endpoint"].(string); e == "" || strings.Contains(e, "://") {
		t.Errorf("sandbox_get_endpoint: %v", ep)
	}

	if got := h.ok("sandbox_kill", map[string]any{"sandbox_id": id}); got["status"] != "killed" {
		t.Errorf("sandbox_kill: %v", got)
	}
	if _, err := h.api.GetSandbox(context.Background(), id); !client.IsStatus(err, 404) {
		t.Errorf("after sandbox_kill the server still has the sandbox (%v)", err)
	}
	expectFailure(t, h.fails("sandbox_get_info", map[string]any{"sandbox_id": id}), 4, "not_found", id)
	// Killed sandboxes leave the registry.
	expectFailure(t, h.fails("command_run", map[string]any{"sandbox_id": id, "command": "true"}), 2, "usage", "sandbox_connect")
}

func TestCommandRun(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	id := h.create(nil)

	ex := h.ok("command_run", map[string]any{"sandbox_id": id, "command": "echo one; echo two >&2; printf 'a b\\n' | tr a-z A-Z; exit 3"})
	if ex["exit_code"] != float64(3) || stdout(ex) != msgs("one", "A B") || stderr(ex) != msgs("two") {
		t.Errorf("command_run: exit %v, stdout %q, stderr %q", ex["exit_code"], stdout(ex), stderr(ex))
	}
	if e := ex["error"].(map[string]any); e["value"] != "3" || ex["complete"] != nil {
		t.Errorf("a failed command reports error %v and complete %v", e, ex["complete"])
	}
	if id, _ := ex["id"].(string); id == "" {
		t.Errorf("command_run returned no execution id: %v", ex)
	}

	ex = h.ok("command_run", map[string]any{"sandbox_id": id, "command": "echo made > wd-marker", "working_directory": "/tmp"})
	if ex["exit_code"] != float64(0) || stdout(ex) != msgs() || stderr(ex) != msgs() || ex["error"] != nil {
		t.Errorf("command_run in /tmp: %v", ex)
	}
	if got := h.ok("file_read", map[string]any{"sandbox_id": id, "path": "/tmp/wd-marker"}); got["content"] != "made\n" {
		t.Errorf("the command did not run in /tmp: %v", got)
	}
	if c := ex["complete"].(map[string]any); c["timestamp"].(float64) <= 0 {
		t.Errorf("complete: %v", c)
	}

	bg := h.ok("command_run", map[string]any{"sandbox_id": id, "command": "sleep 60", "background": true})
	exec, _ := bg["id"].(string)
	if exec == "" || bg["exit_code"] != nil {
		t.Fatalf("background command_run: %v", bg)
	}
	dp, err := h.api.DataPlane(context.Background(), id, client.PortExecd)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := dp.CommandStatus(context.Background(), exec); err != nil || !st.Running {
		t.Fatalf("the background command is not running: %+v %v", st, err)
	}
	if got := h.ok("command_interrupt", map[string]any{"sandbox_id": id, "execution_id": exec}); got["status"] != "interrupted" {
		t.Errorf("command_interrupt: %v", got)
	}
	if st, err := dp.CommandStatus(context.Background(), exec); err != nil || st.Running {
		t.Errorf("the command still runs after command_interrupt: %+v %v", st, err)
	}

	expectFailure(t, h.fails("command_run", map[string]any{"sandbox_id": id, "command": "  "}), 2, "usage", "command must not be empty")
	// execd answers 500 for an unknown execution id.
	expectFailure(t, h.fails("command_interrupt", map[string]any{"sandbox_id": id, "execution_id": "nope"}), 1, "error", "HTTP 500")
}

func TestFiles(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	id := h.create(nil)
	call := func(tool string, args map[string]any) map[string]any {
		args["sandbox_id"] = id
		return h.ok(tool, args)
	}
	text := "naïve line one\nline two\n"
	if got := call("file_write", map[string]any{"path": "/workspace/app/notes.txt", "content": text, "mode": 640}); got["status"] != "written" {
		t.Errorf("file_write: %v", got)
	}
	if got := call("file_read", map[string]any{"path": "/workspace/app/notes.txt"}); got["content"] != text || got["path"] != "/workspace/app/notes.txt" {
		t.Errorf("file_read: %v", got)
	}
	if got := call("file_read", map[string]any{"path": "/workspace/app/notes.txt", "range_header": "bytes=16-19"}); got["content"] != "line" {
		t.Errorf("file_read of bytes 16-19: %v", got)
	}
	dp, err := h.api.DataPlane(context.Background(), id, client.PortExecd)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := dp.FileInfo(context.Background(), []string{"/workspace/app/notes.txt"})
	if err != nil || infos["/workspace/app/notes.txt"].Mode != 640 {
		t.Errorf("file_write mode 640: the server has %+v (%v)", infos, err)
	}

	latin := "caf\u00e9"
	call("file_write", map[string]any{"path": "/workspace/latin.txt", "content": latin, "encoding": "latin-1"})
	if got := call("file_read", map[string]any{"path": "/workspace/latin.txt", "encoding": "latin-1"}); got["content"] != latin {
		t.Errorf("latin-1 round trip: %v", got)
	}
	expectFailure(t, h.fails("file_read", map[string]any{"sandbox_id": id, "path": "/workspace/latin.txt"}), 2, "usage", "not utf-8 text")

	found := call("file_search", map[string]any{"path": "/workspace", "pattern": "*.txt"})
	var paths []string
	for _, e := range found["result"].([]any) {
		paths = append(paths, e.(map[string]any)["path"].(string))
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"/workspace/app/notes.txt", "/workspace/latin.txt"}) {
		t.Errorf("file_search: %v", found)
	}

	counts := call("file_replace_contents", map[string]any{"entries": []any{
		map[string]any{"path": "/workspace/app/notes.txt", "old_content": "line", "new_content": "row"},
		map[string]any{"path": "/workspace/latin.txt", "old_content": "zzz", "new_content": "y"},
	}})
	want := []any{map[string]any{"path": "/workspace/app/notes.txt", "replaced_count": float64(2)}, map[string]any{"path": "/workspace/latin.txt", "replaced_count": float64(0)}}
	if !equalJSON(counts["result"], want) {
		t.Errorf("file_replace_contents: %v", counts)
	}

	call("file_create_directories", map[string]any{"entries": []any{map[string]any{"path": "/workspace/a/b"}, map[string]any{"path": "/workspace/c", "mode": 700}}})
	call("file_move", map[string]any{"entries": []any{map[string]any{"source": "/workspace/app/notes.txt", "destination": "/workspace/a/b/moved.txt"}}})
	if got := call("file_read", map[string]any{"path": "/workspace/a/b/moved.txt"}); got["content"] != "naïve row one\nrow two\n" {
		t.Errorf("after move and replace: %v", got)
	}
	infos, _ = dp.FileInfo(context.Background(), []string{"/workspace/a/b", "/workspace/c"})
	if infos["/workspace/a/b"].Mode != 755 || infos["/workspace/c"].Mode != 700 {
		t.Errorf("file_create_directories modes: %+v", infos)
	}
	call("file_delete", map[string]any{"paths": []any{"/workspace/a/b/moved.txt"}})
	call("file_delete_directories", map[string]any{"paths": []any{"/workspace/a", "/workspace/c"}})
	left, err := dp.ListDirectory(context.Background(), "/workspace", 3)
	if err != nil || len(left) != 2 {
		t.Errorf("/workspace after the deletes holds %+v (%v), want app and latin.txt", left, err)
	}
	expectFailure(t, h.fails("file_read", map[string]any{"sandbox_id": id, "path": "/workspace/a/b/moved.txt"}), 4, "not_found", "")
	expectFailure(t, h.fails("file_write", map[string]any{"sandbox_id": id, "path": "/workspace/x", "content": "x", "mode": 999}), 2, "usage", "mode")
}

func equalJSON(a, b any) bool {
	return strings.EqualFold(mustMarshal(a), mustMarshal(b))
}

// command_run keeps output as the official server does: a message per
// line, in order, the line without its terminator (a CRLF ends one line, a
// last line without a newline is as whole as the others), an empty line
// as "\n", and no message for a stream that printed nothing.
func TestCommandOutputLines(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	id := h.create(nil)
	cases := []struct{ command, stdout, stderr string }{
		{`printf 'a\n\nb\r\nc'; printf 'e1\n\ne2\n' >&2`, msgs("a", "\n", "b", "c"), msgs("e1", "\n", "e2")},
		{"echo", msgs("\n"), msgs()},
		{"echo; echo", msgs("\n", "\n"), msgs()},
		{"true", msgs(), msgs()},
		{"seq 3 >&2", msgs(), msgs("1", "2", "3")},
	}
	for _, c := range cases {
		ex := h.ok("command_run", map[string]any{"sandbox_id": id, "command": c.command})
		if stdout(ex) != c.stdout || stderr(ex) != c.stderr {
			t.Errorf("%s: stdout %s, stderr %s; want %s, %s", c.command, stdout(ex), stderr(ex), c.stdout, c.stderr)
		}
	}
}

// Tools that reach into a sandbox act only on sandboxes this server
// registered, unless asked to connect.
func TestRegistry(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	sb := createDirectly(t, h.api)
	waitRunning(t, h.api, sb.ID)
	for _, tool := range []string{"command_run", "file_read", "sandbox_get_metrics", "sandbox_healthcheck", "sandbox_get_endpoint"} {
		f := h.fails(tool, map[string]any{"sandbox_id": sb.ID, "command": "true", "path": "/etc/hostname", "port": 80})
		expectFailure(t, f, 2, "usage", "sandbox_connect")
	}
	// As the official server does: kill, get_info and renew need no registration.
	if got := h.ok("sandbox_get_info", map[string]any{"sandbox_id": sb.ID}); got["id"] != sb.ID {
		t.Errorf("sandbox_get_info: %v", got)
	}
	// connect_if_missing connects and registers on the way.
	ex := h.ok("command_run", map[string]any{"sandbox_id": sb.ID, "command": "echo in", "connect_if_missing": true})
	if stdout(ex) != msgs("in") {
		t.Errorf("command_run with connect_if_missing: %v", ex)
	}
	if got := h.ok("sandbox_healthcheck", map[string]any{"sandbox_id": sb.ID}); got["healthy"] != true {
		t.Errorf("after connecting: %v", got)
	}

	// sandbox_connect takes a unique prefix and registers the full id.
	other := createDirectly(t, h.api)
	conn := h.ok("sandbox_connect", map[string]any{"sandbox_id": other.ID[:12]})
	if conn["sandbox_id"] != other.ID || conn["info"].(map[string]any)["status"].(map[string]any)["state"] != "Running" {
		t.Errorf("sandbox_connect: %v", conn)
	}
	h.ok("file_write", map[string]any{"sandbox_id": other.ID, "path": "/tmp/x", "content": "x"})
	expectFailure(t, h.fails("sandbox_connect", map[string]any{"sandbox_id": "no-such-sandbox"}), 4, "not_found", "no-such-sandbox")
}

// createDirectly creates a sandbox through the API, not through a tool.
func createDirectly(t *testing.T, api *client.Client) *client.Sandbox {
	t.Helper()
	timeout := int64(600)
	sb, err := api.CreateSandbox(context.Background(), &client.CreateSandboxRequest{Image: &client.ImageSpec{URI: "python:3.11"},
		Timeout: &timeout, ResourceLimits: map[string]string{"cpu": "1"}, Entrypoint: []string{"tail", "-f", "/dev/null"}})
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

func TestAllowAnySandbox(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{AllowAnySandbox: true})
	sb := createDirectly(t, h.api)
	if ex := h.ok("command_run", map[string]any{"sandbox_id": sb.ID, "command": "echo any"}); stdout(ex) != msgs("any") {
		t.Errorf("command_run: %v", ex)
	}
}

func waitRunning(t *testing.T, c *client.Client, id string) {
	t.Helper()
	if err := ops.WaitReady(context.Background(), c, id, ops.Readiness{Timeout: time.Minute, Poll: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
}

func TestArgumentErrors(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	// Refused by the schema, before any request.
	expectFailure(t, h.fails("sandbox_create", map[string]any{}), 2, "usage", "image")
	expectFailure(t, h.fails("sandbox_renew", map[string]any{"sandbox_id": "x", "timeout_seconds": "soon"}), 2, "usage", "timeout_seconds")
	expectFailure(t, h.fails("sandbox_create", map[string]any{"image": "python:3.11", "auth_username": "me"}), 2, "usage", "auth_password")
	list, err := h.api.ListSandboxes(context.Background(), client.ListSandboxesParams{})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("refused calls created sandboxes: %+v %v", list, err)
	}
}

// A sandbox that never becomes ready is removed, as the official SDK does.
func TestCreateNotReady(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{})
	f := h.fails("sandbox_create", map[string]any{"image": "python:3.11", "ready_timeout_seconds": 1e-9})
	expectFailure(t, f, 5, "timeout", "was not ready within")
	list, err := h.api.ListSandboxes(context.Background(), client.ListSandboxesParams{States: []string{"Running", "Pending"}})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("the sandbox that never became ready is still there: %+v %v", list.Items, err)
	}
}

func TestExtras(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{Tools: []string{"default", "command_logs", "file_upload", "file_download"}})
	id := h.create(nil)
	bin := []byte{0, 1, 2, 0xff, 0xfe, '\n', 'x'}
	up := h.ok("file_upload", map[string]any{"sandbox_id": id, "path": "/workspace/blob.bin", "content_base64": base64.StdEncoding.EncodeToString(bin)})
	if up["size"] != float64(len(bin)) {
		t.Errorf("file_upload: %v", up)
	}
	down := h.ok("file_download", map[string]any{"sandbox_id": id, "path": "/workspace/blob.bin"})
	if got, _ := base64.StdEncoding.DecodeString(down["content_base64"].(string)); string(got) != string(bin) {
		t.Errorf("file_download: %v", down)
	}
	expectFailure(t, h.fails("file_upload", map[string]any{"sandbox_id": id, "path": "/x", "content_base64": "!!"}), 2, "usage", "base64")

	bg := h.ok("command_run", map[string]any{"sandbox_id": id, "command": "echo first; echo second", "background": true})
	exec := bg["id"].(string)
	var logs map[string]any
	deadline := time.Now().Add(time.Minute)
	for {
		logs = h.ok("command_logs", map[string]any{"sandbox_id": id, "execution_id": exec})
		if logs["running"] == false || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if logs["output"] != "first\nsecond\n" || logs["exit_code"] != float64(0) {
		t.Fatalf("command_logs: %v", logs)
	}
	again := h.ok("command_logs", map[string]any{"sandbox_id": id, "execution_id": exec, "cursor": logs["cursor"]})
	if again["output"] != "" {
		t.Errorf("command_logs from the last cursor: %v", again)
	}
}

func TestToolSets(t *testing.T) {
	t.Parallel()
	official, extras := osbmcp.ToolNames()
	want := []string{"sandbox_create", "sandbox_connect", "sandbox_kill", "sandbox_get_info", "sandbox_list", "sandbox_renew",
		"sandbox_get_metrics", "sandbox_healthcheck", "command_run", "command_interrupt", "file_read", "file_write",
		"file_delete", "file_search", "file_create_directories", "file_delete_directories", "file_move",
		"file_replace_contents", "sandbox_get_endpoint"}
	if !slices.Equal(official, want) {
		t.Errorf("official tools %v", official)
	}
	if !slices.Equal(extras, []string{"command_logs", "file_upload", "file_download", "shell_exec", "code_run"}) {
		t.Errorf("extras %v", extras)
	}
	for _, c := range []struct {
		in   []string
		want []string
		err  string
	}{
		{in: nil, want: official},
		{in: []string{"sandbox_create", "command_run"}, want: []string{"sandbox_create", "command_run"}},
		{in: []string{"-sandbox_kill", "-file_delete"}, want: slices.DeleteFunc(slices.Clone(official), func(s string) bool { return s == "sandbox_kill" || s == "file_delete" })},
		{in: []string{"all", "-file_upload"}, want: append(slices.Clone(official), "command_logs", "file_download", "shell_exec", "code_run")},
		{in: []string{"default", "command_logs"}, want: append(slices.Clone(official), "command_logs")},
		{in: []string{"shell"}, err: `unknown tool "shell" in --tools`},
		{in: []string{"command_run", "-command_run"}, err: "leaves no tool"},
	} {
		got, err := osbmcp.SelectTools(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("SelectTools(%q): %v, want error %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SelectTools(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// The server lists exactly the tools selected.
func TestListTools(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{Tools: []string{"sandbox_create", "command_logs"}})
	res, err := h.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"command_logs", "sandbox_create"}) {
		t.Errorf("tools %v", names)
	}
	_, err = h.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "command_run", Arguments: map[string]any{"sandbox_id": "x", "command": "true"}})
	if err == nil || !strings.Contains(err.Error(), `unknown tool "command_run"`) {
		t.Errorf("a tool left out: %v", err)
	}
}

// shell_exec keeps one interactive shell between calls.
func TestShellExec(t *testing.T) {
	t.Parallel()
	h := start(t, osbmcp.Options{Tools: []string{"default", "shell_exec"}})
	id := h.create(nil)
	// The echo of the typed line shows $((...)) unexpanded: only the shell's
	// own output holds the result.
	first := h.ok("shell_exec", map[string]any{"sandbox_id": id, "working_directory": "/tmp",
		"input": "X=forty; cd /workspace; echo mark-$((40+2))\n", "until": "mark-42"})
	sid, _ := first["session_id"].(string)
	if sid == "" || first["running"] != true || first["timed_out"] != false || !strings.Contains(first["output"].(string), "mark-42") {
		t.Fatalf("first call: %v", first)
	}
	second := h.ok("shell_exec", map[string]any{"sandbox_id": id, "session_id": sid,
		"input": "echo \"$X in $PWD\"; echo done-$((1+1))\n", "until": "done-2"})
	if second["session_id"] != sid || !strings.Contains(second["output"].(string), "forty in /workspace") {
		t.Errorf("second call: %v", second)
	}
	if strings.Contains(second["output"].(string), "mark-42") {
		t.Errorf("output already returned came again: %v", second)
	}
	// Quiet for idle_ms is not the end: the call waits for the shell to exit
	// (a loaded machine may take more than the default idle_ms to get there).
	last := h.ok("shell_exec", map[string]any{"sandbox_id": id, "session_id": sid, "input": "exit 3\n", "end": true, "timeout_seconds": 60, "idle_ms": 60000})
	if last["running"] != false || last["exit_code"] != float64(3) {
		t.Errorf("exit: %v", last)
	}
	expectFailure(t, h.fails("shell_exec", map[string]any{"sandbox_id": id, "session_id": sid, "input": "ls\n"}), 2, "usage", "leave session_id out")
	if got := h.ok("shell_exec", map[string]any{"sandbox_id": id, "input": "sleep 30\n", "until": "never printed", "timeout_seconds": 0.5}); got["timed_out"] != true || got["running"] != true {
		t.Errorf("timeout: %v", got)
	}
}
