package commands_test

import (
	"encoding/json"
	"regexp"
	"slices"
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
		{[]string{"sandbox", "get", "sb", "-q", "id", "-o", "table"}, "-q works on the json output; it cannot be combined with -o table"},
		{[]string{"sandbox", "get", "sb", "--jq", ".id", "-o", "table"}, "--jq works on the json output; it cannot be combined with -o table"},
		{[]string{"sandbox", "get", "sb", "--template", "{{.id}}", "-o", "table"}, "--template works on the json output; it cannot be combined with -o table"},
		{[]string{"sandbox", "lsit"}, `unknown command "lsit" for "osb sandbox". Did you mean "list"?`},
		{[]string{"help", "sandbx"}, `unknown help topic "sandbx" for "osb". Did you mean "sandbox"?`},
		// Did you mean: flags, help topics, the words other tools use.
		{[]string{"sandbox", "create", "--imge", "x"}, `unknown flag: --imge. Did you mean "--image"? (see 'osb sandbox create --help')`},
		{[]string{"help", "exit-code"}, `unknown help topic "exit-code" for "osb". Did you mean "exit-codes"?`},
		{[]string{"sandbox", "delete", "sb"}, `unknown command "delete" for "osb sandbox". Did you mean "kill"?`},
		{[]string{"sandbox", "rm", "sb"}, `unknown command "rm" for "osb sandbox". Did you mean "kill"?`},
	} {
		r := env.Run(tc.args...)
		r.ExpectError(t, 2, tc.want)
	}
	// A mistake in -q, --jq or --template is a json error: they promise
	// json, and a script parses stderr as such.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sandbox", "get", "sb", "-q", "id", "--template", "{{.id}}"}, "-q and --template cannot be used together"},
		{[]string{"sandbox", "get", "sb", "-q", "id", "--jq", ".id"}, "-q and --jq cannot be used together"},
		{[]string{"sandbox", "list", "-q", "items.#(id==1"}, "invalid -q path 'items.#(id==1' (gjson path syntax): missing ')'"},
		{[]string{"sandbox", "list", "-q", "items..id"}, "invalid -q path 'items..id' (gjson path syntax): empty part at 6"},
		{[]string{"sandbox", "list", "-q", "@nosuch"}, "invalid -q path '@nosuch' (gjson path syntax): unknown modifier @nosuch"},
		{[]string{"sandbox", "list", "--template", "{{.items"}, "invalid --template: template: --template:1: unclosed action"},
		{[]string{"sandbox", "create", "-i", "x", "--output-template", "{{nosuch}}"}, `invalid --output-template: template: --template:1: function "nosuch" not defined`},
		// Each syntax error names its syntax and shows the other form.
		{[]string{"sandbox", "list", "-q", ".items[].id"},
			"invalid -q path '.items[].id' (gjson path syntax): empty part at 1; as jq that is --jq '.items[].id', as a gjson path -q 'items.#.id'"},
		{[]string{"sandbox", "list", "--jq", "items.#.id"},
			"invalid --jq expression 'items.#.id' (jq syntax): unexpected EOF; as a gjson path that is -q 'items.#.id', in jq --jq '.items[].id'"},
		{[]string{"sandbox", "get", "sb", "--jq", "status.state"},
			"invalid --jq expression 'status.state' (jq syntax): function not defined: status/0; as a gjson path that is -q 'status.state', in jq --jq '.status.state'"},
		{[]string{"sandbox", "list", "--jq", ".items[] | nosuch"}, "invalid --jq expression '.items[] | nosuch' (jq syntax): function not defined: nosuch/0"},
		// An argument error under -q is json too.
		{[]string{"sandbox", "get", "-q", "id"}, "missing SANDBOX_ID"},
	} {
		r := env.Run(tc.args...)
		r.ExpectJSONError(t, 2, tc.want)
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
		e.Message != "-q 'nope' matched nothing in the output; its top-level keys are: id, status, entrypoint, expires_at, created_at, image, snapshot_id, platform, allocation, metadata, extensions" {
		t.Errorf("unmatched path: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// --jq is jq: each result on its own line, strings bare, the rest as
// JSON; a null from a key the output lacks fails as -q's no-match does.
func TestJQExpressions(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t, servertest.NoIsolation)
	first := strings.TrimSpace(env.Must("sandbox", "create", "-i", "python:3.11", "--jq", ".id"))
	second := strings.TrimSpace(env.Must("sandbox", "create", "-i", "python:3.11", "--jq", ".id"))
	ids := []string{first, second}
	slices.Sort(ids)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sandbox", "list", "--jq", "[.items[].id] | sort | .[]"}, ids[0] + "\n" + ids[1] + "\n"},
		{[]string{"sandbox", "list", "--jq", "[.items[].id] | length"}, "2\n"},
		{[]string{"sandbox", "list", "--jq", `.items[] | select(.id == "` + second + `") | .status.state`}, "Running\n"},
		{[]string{"sandbox", "get", first, "--jq", ".entrypoint"}, "[\n  \"tail\",\n  \"-f\",\n  \"/dev/null\"\n]\n"},
		{[]string{"sandbox", "get", first, "--jq", ".snapshot_id"}, "null\n"},
		{[]string{"sandbox", "get", first, "--jq", ".image.image, .status.state"}, "python:3.11\nRunning\n"},
		{[]string{"sandbox", "get", first, "--jq", "{state: .status.state}"}, "{\n  \"state\": \"Running\"\n}\n"},
		{[]string{"sandbox", "list", "--jq", ".items[] | select(.id == \"none\") | .id"}, ""},
	} {
		r := env.Run(tc.args...)
		if r.Stdout != tc.want || r.Code != 0 {
			t.Errorf("osb %s: exit %d, stdout %q, want %q; stderr %q", strings.Join(tc.args, " "), r.Code, r.Stdout, tc.want, r.Stderr)
		}
	}
	keys := "id, status, entrypoint, expires_at, created_at, image, snapshot_id, platform, allocation, metadata, extensions"
	env.Run("sandbox", "get", first, "--jq", ".nope").
		ExpectJSONError(t, 2, "--jq '.nope' matched nothing in the output; its top-level keys are: "+keys)
	env.Run("sandbox", "get", first, "--jq", ".status.nope.deeper").
		ExpectJSONError(t, 2, "--jq '.status.nope.deeper' matched nothing in the output; its top-level keys are: "+keys)
	env.Run("sandbox", "get", first, "--jq", ".id[]").
		ExpectJSONError(t, 2, "--jq '.id[]' failed on the output: cannot iterate over: string (\""+first[:24]+" ...\")")
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

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// At 40 and 80 columns, with colour, under NO_COLOR and with --no-color,
// every line of every list and record fits the terminal and every id is
// shown whole on one line: a table too wide even with its cells cut
// becomes a block of lines per item.
func TestEveryTableFitsAtAnyWidth(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t, servertest.NoIsolation)
	id := env.NewSandbox("-m", "a="+strings.Repeat("long-value-", 5)+"end")
	snap := strings.TrimSpace(env.Must("snapshot", "create", id, "--name", "before", "-q", "id"))
	tpl := strings.TrimSpace(env.Must("template", "create", "-i", "python:3.11", "-p", "s3://bucket/publish", "-q", "template_id"))
	commands_ := []struct {
		args []string
		ids  []string // shown whole
	}{
		{[]string{"sandbox", "list"}, []string{id}},
		{[]string{"sandbox", "get", id}, []string{id}},
		{[]string{"snapshot", "list"}, []string{snap, id}},
		{[]string{"snapshot", "get", snap}, []string{snap, id}},
		{[]string{"template", "list"}, []string{tpl}},
		{[]string{"template", "get", tpl}, []string{tpl}},
	}
	for _, width := range []int{40, 80} {
		for _, mode := range []string{"colour", "NO_COLOR", "--no-color"} {
			for _, tc := range commands_ {
				args := tc.args
				ios, _, stdout, stderr := iostreams.Test()
				ios.SetTTY(false, true, true)
				ios.SetANSI(mode == "colour")
				ios.SetWidth(width)
				line := args
				if mode == "--no-color" {
					line = append([]string{"--no-color"}, args...)
				}
				if code := commands.Run(t.Context(), env.Factory(ios), line); code != 0 {
					t.Fatalf("osb %s: exit %d: %s", strings.Join(line, " "), code, stderr)
				}
				out := ansiEscape.ReplaceAllString(stdout.String(), "")
				for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
					if w := runewidth.StringWidth(l); w > width {
						t.Errorf("%d columns, %s: osb %s: a line of %d columns:\n%s", width, mode, strings.Join(args, " "), w, out)
						break
					}
				}
				for _, want := range tc.ids {
					if !strings.Contains(out, want) {
						t.Errorf("%d columns, %s: osb %s: %s is not shown whole:\n%s", width, mode, strings.Join(args, " "), want, out)
					}
				}
			}
		}
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
