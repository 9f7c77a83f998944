package commands_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
)

// The directive trailer cobra always writes on stderr for __complete; shells
// discard stderr, and it is the only thing a completion may print there.
const noFileTrailer = "Completion ended with directive: ShellCompDirectiveNoFileComp\n"

func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	for shell, marker := range map[string]string{
		"bash":       "# bash completion V2 for osb",
		"zsh":        "#compdef osb",
		"fish":       "# fish completion for osb",
		"powershell": "# powershell completion for osb",
	} {
		r := env.Run("completion", shell).ExpectCode(t, 0)
		if !strings.Contains(r.Stdout, marker) || r.Stderr != "" {
			t.Errorf("osb completion %s: stdout lacks %q or stderr is not empty:\n%.300s\nstderr: %s", shell, marker, r.Stdout, r.Stderr)
		}
	}
	if r := env.Run("completion", "tcsh"); r.Code != 2 {
		t.Errorf("osb completion tcsh: exit %d, want 2\n%s", r.Code, r.Stderr)
	}
}

func TestCompletionNoDescriptions(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	with := env.Run("completion", "zsh").ExpectCode(t, 0).Stdout
	without := env.Run("completion", "zsh", "--no-descriptions").ExpectCode(t, 0).Stdout
	if with == without || !strings.Contains(without, "__completeNoDesc") {
		t.Errorf("--no-descriptions did not switch to the plain request command")
	}
}

// brokenConfig writes a config file that is not TOML at all.
func brokenConfig(t *testing.T, env *cmdtest.Env) {
	t.Helper()
	dir := filepath.Join(env.Home, ".opensandbox")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte("[connection\napi_key = = \n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestCompletionIgnoresBrokenConfig(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	brokenConfig(t, env)
	if r := env.Run("sandbox", "list"); r.Code != 2 {
		t.Fatalf("a command that reads the config should fail on a broken file: exit %d", r.Code)
	}
	env.Run("completion", "bash").ExpectCode(t, 0)
	// Help needs no config either.
	if r := env.Run("help", "exit-codes").ExpectCode(t, 0); !strings.Contains(r.Stdout, "124") {
		t.Errorf("help exit-codes: %q", r.Stdout)
	}
	env.Run("help", "sandbox").ExpectCode(t, 0)
	r := env.Run("__complete", "sandbox", "get", "").ExpectCode(t, 0)
	if r.Stdout != ":4\n" || r.Stderr != noFileTrailer {
		t.Errorf("completion with a broken config: stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	// Static completion still works.
	r = env.Run("__complete", "sandbox", "list", "-o", "").ExpectCode(t, 0)
	if r.Stdout != "table\njson\nyaml\n:4\n" {
		t.Errorf("-o values: %q", r.Stdout)
	}
}

// An unreachable server gives no candidates and no error text, and exits 0.
func TestCompletionUnreachableServer(t *testing.T) {
	t.Parallel()
	for name, domain := range map[string]string{
		"refused":    "127.0.0.1:1",
		"unresolved": "no-such-host.invalid:8080",
	} {
		t.Run(name, func(t *testing.T) {
			env := cmdtest.Offline(t)
			env.Vars["OPEN_SANDBOX_DOMAIN"] = domain
			for _, line := range [][]string{
				{"__complete", "sandbox", "get", ""},
				{"__complete", "sandbox", "kill", "x", ""},
				{"__complete", "snapshot", "get", ""},
				{"__complete", "template", "get", ""},
				{"__complete", "sandbox", "create", "--template", ""},
				{"__complete", "snapshot", "list", "--sandbox-id", ""},
			} {
				r := env.Run(line...).ExpectCode(t, 0)
				if r.Stdout != ":4\n" || r.Stderr != noFileTrailer {
					t.Errorf("%v: stdout %q stderr %q", line, r.Stdout, r.Stderr)
				}
			}
		})
	}
}

func TestCompleteSandboxIDs(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	a := createSandbox(t, env)
	b := createSandbox(t, env)
	r := env.Run("__complete", "sandbox", "get", "").ExpectCode(t, 0)
	for _, id := range []string{a, b} {
		if !strings.Contains(r.Stdout, id+"\tRunning\n") {
			t.Errorf("candidates lack %s with its state:\n%s", id, r.Stdout)
		}
	}
	if !strings.HasSuffix(r.Stdout, ":4\n") || r.Stderr != noFileTrailer {
		t.Errorf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	// kill takes several ids; those already given are not offered again.
	r = env.Run("__complete", "sandbox", "kill", a, "").ExpectCode(t, 0)
	if strings.Contains(r.Stdout, a) || !strings.Contains(r.Stdout, b) {
		t.Errorf("kill %s: candidates %q", a, r.Stdout)
	}
	// A typed prefix narrows the candidates.
	r = env.Run("__complete", "sandbox", "get", a[:len(a)-1]).ExpectCode(t, 0)
	if r.Stdout != a+"\tRunning\n:4\n" {
		t.Errorf("prefix completion: %q", r.Stdout)
	}
	// --no-descriptions form.
	r = env.Run("__completeNoDesc", "sandbox", "get", a[:len(a)-1]).ExpectCode(t, 0)
	if r.Stdout != a+"\n:4\n" {
		t.Errorf("no-description completion: %q", r.Stdout)
	}
}

// The connection flags on the line being completed are honoured.
func TestCompletionUsesFlagsOnTheLine(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	id := createSandbox(t, env)
	domain := env.Vars["OPEN_SANDBOX_DOMAIN"]
	env.Vars["OPEN_SANDBOX_DOMAIN"] = "127.0.0.1:1"
	r := env.Run("__complete", "--domain", domain, "sandbox", "get", "").ExpectCode(t, 0)
	if !strings.Contains(r.Stdout, id+"\t") {
		t.Errorf("--domain on the line was not used: %q", r.Stdout)
	}
}

func createSandbox(t *testing.T, env *cmdtest.Env) string {
	t.Helper()
	return jsonField(t, env.Must("sandbox", "create", "-i", "python:3.11", "--skip-health-check", "-o", "json"), "id")
}

// Every command whose first argument is an id the server can list completes
// it; a later local path keeps file completion.
func TestIDArgumentsComplete(t *testing.T) {
	t.Parallel()
	ios, _, _, _ := iostreams.Test()
	root := completingRoot(t, ios)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		fields := strings.Fields(c.Use)
		if c.HasSubCommands() || len(fields) < 2 {
			return
		}
		switch strings.TrimSuffix(fields[1], "...") {
		case "SANDBOX_ID", "SNAPSHOT_ID", "TEMPLATE_ID":
			if c.ValidArgsFunction == nil {
				t.Errorf("%s: its id argument has no completion", c.CommandPath())
			}
		}
	}
	walk(root)
}

func TestLocalPathKeepsFileCompletion(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = "127.0.0.1:1"
	r := env.Run("__complete", "file", "upload", "sb-1", "").ExpectCode(t, 0)
	if r.Stdout != ":0\n" {
		t.Errorf("file upload LOCAL_PATH: %q, want file completion (:0)", r.Stdout)
	}
}

func TestCompleteSnapshotAndTemplateIDs(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	sb := createSandbox(t, env)
	snap := jsonField(t, env.Must("snapshot", "create", sb, "--name", "nightly", "--wait", "-o", "json"), "id")
	tpl := jsonField(t, env.Must("template", "create", "-i", "python:3.11", "-p", "s3://bucket/tpl", "-o", "json"), "template_id")

	r := env.Run("__complete", "snapshot", "get", "").ExpectCode(t, 0)
	if r.Stdout != snap+"\tReady nightly\n:4\n" {
		t.Errorf("snapshot candidates: %q", r.Stdout)
	}
	r = env.Run("__complete", "snapshot", "delete", snap[:len(snap)-2]).ExpectCode(t, 0)
	if !strings.HasPrefix(r.Stdout, snap+"\t") {
		t.Errorf("snapshot prefix candidates: %q", r.Stdout)
	}
	r = env.Run("__complete", "template", "get", "").ExpectCode(t, 0)
	if !strings.HasPrefix(r.Stdout, tpl+"\t") || !strings.Contains(r.Stdout, " python:3.11\n") {
		t.Errorf("template candidates: %q", r.Stdout)
	}
	// Only the first argument is an id.
	r = env.Run("__complete", "template", "get", tpl, "").ExpectCode(t, 0)
	if r.Stdout != ":4\n" {
		t.Errorf("second argument: %q", r.Stdout)
	}

	// Flags that take an id complete it from the server, not from local files.
	for _, tc := range []struct {
		line []string
		want string
	}{
		{[]string{"sandbox", "create", "--snapshot-id", ""}, snap + "\tReady nightly\n"},
		{[]string{"sandbox", "create", "--snapshot-id", snap[:len(snap)-1]}, snap + "\tReady nightly\n"},
		{[]string{"sandbox", "create", "--template", tpl[:len(tpl)-1]}, tpl + "\t"},
		{[]string{"snapshot", "list", "--sandbox-id", sb[:len(sb)-1]}, sb + "\tRunning\n"},
	} {
		r := env.Run(append([]string{"__complete"}, tc.line...)...).ExpectCode(t, 0)
		if !strings.HasPrefix(r.Stdout, tc.want) || !strings.HasSuffix(r.Stdout, "\n:4\n") || r.Stderr != noFileTrailer {
			t.Errorf("%v: stdout %q stderr %q, want %q first and no file completion", tc.line, r.Stdout, r.Stderr, tc.want)
		}
	}
}

// Every flag whose value is an id the server can list completes it.
func TestIDFlagsComplete(t *testing.T) {
	t.Parallel()
	ios, _, _, _ := iostreams.Test()
	root := completingRoot(t, ios)
	seen := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		for _, name := range []string{"sandbox-id", "snapshot-id", "template"} {
			if c.LocalNonPersistentFlags().Lookup(name) == nil {
				continue
			}
			seen++
			if _, ok := c.GetFlagCompletionFunc(name); !ok {
				t.Errorf("%s --%s: no completion (the shell would offer local files)", c.CommandPath(), name)
			}
		}
	}
	walk(root)
	if seen < 3 {
		t.Errorf("found %d id flags; sandbox create --template/--snapshot-id and snapshot list --sandbox-id at least", seen)
	}
}

// completingRoot returns a root command that has served one completion
// request, which is when id completion is filled in.
func completingRoot(t *testing.T, ios *iostreams.IOStreams) *cobra.Command {
	t.Helper()
	root := commands.NewCmdRoot(cmdutil.New(ios, func(string) string { return "" }))
	root.SetArgs([]string{cobra.ShellCompRequestCmd, ""})
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	if err := root.Execute(); err != nil {
		t.Fatalf("completion request: %v", err)
	}
	return root
}

func jsonField(t *testing.T, out, key string) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	s, _ := v[key].(string)
	if s == "" {
		t.Fatalf("no %s in %s", key, out)
	}
	return s
}

// A server that accepts connections and never answers: completion gives up
// after its short budget, offers nothing and says nothing.
func TestCompletionSilentServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // held open, never answered
		}
	}()
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = ln.Addr().String()
	for _, line := range [][]string{{"__complete", "sandbox", "get", ""}, {"__complete", "snapshot", "get", ""}} {
		r := env.Run(line...).ExpectCode(t, 0)
		if r.Stdout != ":4\n" || r.Stderr != noFileTrailer {
			t.Errorf("%v: stdout %q stderr %q", line, r.Stdout, r.Stderr)
		}
	}
}
