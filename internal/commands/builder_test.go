package commands_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// Every mistake the builder can see on the command line is exit 2 with one
// error line, before any request: the server sees nothing.
func TestBuilderUsageErrorsSendNoRequest(t *testing.T) {
	t.Parallel()
	srv, requests := countingServer(t)
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sandbox", "get"}, "missing SANDBOX_ID"},
		{[]string{"sandbox", "get", "a", "b"}, `unexpected argument "b" after SANDBOX_ID`},
		{[]string{"sandbox", "list", "x"}, `unexpected argument "x": osb sandbox list takes none`},
		{[]string{"file", "mv", "sb", "a"}, "missing DESTINATION"},
		{[]string{"command", "run", "sb"}, "missing the command to run"},
		{[]string{"sandbox", "get", "sb", "-o", "xml"}, `'xml' is not one of 'table', 'json', 'yaml'`},
		{[]string{"sandbox", "get", "sb", "--nope"}, "unknown flag: --nope"},
		{[]string{"sandbox", "get", "sb", "-q", "id", "-o", "table"}, "--jq works on the json output; it cannot be combined with -o table"},
		{[]string{"sandbox", "get", "sb", "--template", "{{.id}}", "-o", "table"}, "--template works on the json output; it cannot be combined with -o table"},
		{[]string{"sandbox", "get", "sb", "-q", "id", "--template", "{{.id}}"}, "--jq and --template cannot be used together"},
		{[]string{"sandbox", "list", "-q", "items.#(id==1"}, "invalid --jq path 'items.#(id==1': missing ')'"},
		{[]string{"sandbox", "list", "-q", "items..id"}, "invalid --jq path 'items..id': empty part at 6"},
		{[]string{"sandbox", "list", "-q", "@nosuch"}, "unknown modifier @nosuch"},
		{[]string{"sandbox", "list", "--template", "{{.items"}, "invalid --template: template: --template:1: unclosed action"},
		{[]string{"sandbox", "create", "-i", "x", "--output-template", "{{nosuch}}"}, `function "nosuch" not defined`},
		{[]string{"sandbox", "lsit"}, `unknown command "lsit" for "osb sandbox". Did you mean "list"?`},
		{[]string{"help", "sandbx"}, `unknown help topic "sandbx" for "osb". Did you mean "sandbox"?`},
	} {
		r := env.Run(tc.args...)
		r.ExpectError(t, 2, tc.want)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the server got %d requests for usage errors", n)
	}
}

// --jq prints the part of the json document it names: text plain, lists of
// values one per line, objects indented; on records, lists, panels,
// messages, command results and streams alike.
func TestJQOnEveryKindOfOutput(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t, servertest.NoIsolation)
	id := strings.TrimSpace(env.Must("sandbox", "create", "-i", "python:3.11", "-q", "id"))
	if len(id) < 8 || strings.ContainsAny(id, "\"{ \n") {
		t.Fatalf("create -q id printed %q, want the bare id", id)
	}
	second := strings.TrimSpace(env.Must("sandbox", "create", "-i", "python:3.11", "-q", "id"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sandbox", "get", id, "-q", "status.state"}, "Running\n"},
		{[]string{"sandbox", "get", id, "-q", "entrypoint"}, "tail\n-f\n/dev/null\n"},
		{[]string{"sandbox", "get", id, "-q", "image"}, "{\n  \"image\": \"python:3.11\",\n  \"auth\": null\n}\n"},
		{[]string{"sandbox", "get", id, "-q", "snapshot_id"}, "null\n"},
		{[]string{"sandbox", "list", "-q", "pagination.total_items"}, "2\n"},
		{[]string{"sandbox", "list", "-q", "items.#(id==\"" + second + "\").status.state"}, "Running\n"},
		{[]string{"sandbox", "health", id, "-q", "healthy"}, "true\n"},
		{[]string{"sandbox", "pause", second, "-q", "status"}, "ok\n"},
		{[]string{"sandbox", "kill", second, "-q", "#.status"}, "terminated\n"},
		{[]string{"command", "run", id, "-q", "stdout", "--", "echo", "hi"}, "hi\n\n"},
		{[]string{"command", "run", id, "-o", "json", "-q", "exit_code", "--", "sh", "-c", "exit 3"}, "3\n"},
		{[]string{"config", "get", "connection.protocol", "-q", "source"}, "default\n"},
	} {
		r := env.Run(tc.args...)
		if r.Stdout != tc.want || (r.Code != 0 && tc.args[1] != "run") {
			t.Errorf("osb %s: exit %d, stdout %q, want %q; stderr %q", strings.Join(tc.args, " "), r.Code, r.Stdout, tc.want, r.Stderr)
		}
	}
	// A stream: each read of a followed log is one document.
	exec := strings.TrimSpace(env.Must("command", "run", id, "-d", "-q", "execution_id", "--", "sh", "-c", "echo one; echo two"))
	cmdtest.Eventually(t, "the background command to end", func() bool {
		return strings.TrimSpace(env.Must("command", "status", id, exec, "-q", "running")) == "false"
	})
	if out := env.Must("command", "logs", id, exec, "-f", "-q", "content"); out != "one\ntwo\n\n" {
		t.Errorf("logs -f -q content: %q", out)
	}
	// A path that matches nothing fails, naming what is there; errors
	// follow the json format --jq implies.
	r := env.Run("sandbox", "get", id, "-q", "nope")
	var e struct {
		Message  string `json:"message"`
		ExitCode int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(r.Stderr), &e); err != nil || r.Code != 2 || r.Stdout != "" ||
		e.Message != "--jq 'nope' matched nothing in the output; its top-level keys are: id, status, entrypoint, expires_at, created_at, image, snapshot_id, platform, allocation, metadata, extensions" {
		t.Errorf("unmatched path: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// --template runs over the same document, with its helpers.
func TestTemplateOutput(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t, servertest.NoIsolation)
	id := strings.TrimSpace(env.Must("sandbox", "create", "-i", "python:3.11", "--output-template", "{{.id}}"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sandbox", "list", "--template", `{{range .items}}{{.id}} {{.status.state}}{{"\n"}}{{end}}`}, id + " Running\n"},
		{[]string{"sandbox", "list", "--template", `{{table .items "id" "snapshot_id"}}`}, "ID" + strings.Repeat(" ", len(id)) + "SNAPSHOT_ID\n" + id + "  -\n"},
		{[]string{"sandbox", "get", id, "--template", `{{range .entrypoint}}{{tablerow . "x"}}{{end}}{{tablerender}}`}, "tail       x\n-f         x\n/dev/null  x\n"},
		{[]string{"sandbox", "get", id, "--template", `{{json .image}} {{join "," .entrypoint}}`}, `{"auth":null,"image":"python:3.11"} tail,-f,/dev/null`},
		{[]string{"sandbox", "get", id, "--template", `{{timeago .created_at}}`}, "just now"},
	} {
		if out := env.Must(tc.args...); out != tc.want {
			t.Errorf("osb %s:\n%q\nwant\n%q", strings.Join(tc.args, " "), out, tc.want)
		}
	}
	env.Run("sandbox", "get", id, "--template", "{{.nope}}").ExpectCode(t, 1)
}

// On an 80-column terminal every table line fits, ids are shown whole and
// cut cells end in "…"; a record's long values wrap instead. Piped output
// is never cut.
func TestTablesFitTheTerminal(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t, servertest.NoIsolation)
	long := strings.Repeat("long-value-", 5) + "end"
	id := env.NewSandbox("-m", "a="+long, "-m", "b="+long)
	run := func(args ...string) string {
		t.Helper()
		ios, _, stdout, stderr := iostreams.Test()
		ios.SetTTY(false, true, true)
		ios.SetWidth(80)
		if code := commands.Run(t.Context(), env.Factory(ios), args); code != 0 {
			t.Fatalf("osb %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return stdout.String()
	}
	for _, args := range [][]string{{"sandbox", "list"}, {"sandbox", "get", id}} {
		out := run(args...)
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if w := runewidth.StringWidth(line); w > 80 {
				t.Errorf("osb %s: a line of %d columns:\n%s", strings.Join(args, " "), w, out)
				break
			}
		}
		if !strings.Contains(out, id) {
			t.Errorf("osb %s: the id is not shown whole:\n%s", strings.Join(args, " "), out)
		}
	}
	if out := run("sandbox", "list"); !strings.Contains(out, "…") {
		t.Errorf("list: no cell was cut to fit:\n%s", out)
	}
	if out := run("sandbox", "get", id); strings.Contains(out, "…") || !strings.Contains(out, `-end"}`) {
		t.Errorf("get: a record's values must wrap, not be cut:\n%s", out)
	}
	if out := env.Must("sandbox", "get", id); !strings.Contains(out, `{"a":"`+long+`","b":"`+long+`"}`) {
		t.Errorf("piped output was cut:\n%s", out)
	}
}

// A group without a verb prints its help and exits 0, as 'osb help GROUP'
// does; the same words are a usage error when they name nothing.
func TestGroupsAndHelpAgree(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	group := env.Run("sandbox")
	help := env.Run("help", "sandbox")
	if group.Code != 0 || help.Code != 0 || group.Stdout != help.Stdout || !strings.Contains(group.Stdout, "Available Commands:") {
		t.Errorf("osb sandbox (exit %d) and osb help sandbox (exit %d) differ:\n%s\n---\n%s", group.Code, help.Code, group.Stdout, help.Stdout)
	}
	env.Run("help", "nonsense").ExpectError(t, 2, `unknown help topic "nonsense" for "osb"`)
	env.Run("nonsense").ExpectError(t, 2, `unknown command "nonsense" for "osb"`)
	env.Run("help", "sandbox", "lsit").ExpectError(t, 2, `unknown help topic "lsit" for "osb sandbox". Did you mean "list"?`)
}
