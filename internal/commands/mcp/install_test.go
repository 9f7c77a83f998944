package mcp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands/skills"
	"github.com/osb-dev/osb/internal/mcp/agentconfig"
)

func TestTargetsAreTheSkillsTargets(t *testing.T) {
	t.Parallel()
	if !slices.Equal(agentconfig.AgentNames(), skills.TargetNames()) {
		t.Errorf("mcp install targets %v, skills targets %v", agentconfig.AgentNames(), skills.TargetNames())
	}
}

// onPath puts this test binary on the env's PATH as osb, as an installed
// osb is.
func onPath(t *testing.T, env *cmdtest.Env) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "osb")); err != nil {
		t.Fatal(err)
	}
	env.Vars["PATH"] = bin
}

func TestInstallGlobal(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	env.Vars["XDG_CONFIG_HOME"] = ""
	onPath(t, env)
	// Cline's former file, read by older versions of its VS Code
	// extension, is updated too since it exists, keeping its entries.
	former := filepath.Join(env.Home, ".config", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")
	os.MkdirAll(filepath.Dir(former), 0o755)
	os.WriteFile(former, []byte(`{"mcpServers": {"mine": {"command": "x"}}}`), 0o600)
	r := env.Run("mcp", "install", "--target", "all", "--scope", "global", "--tools", "default,command_logs").ExpectCode(t, 0)
	cmdtest.Golden(t, "install-all-global.table", cmdtest.Normalize(r.Stdout, map[string]string{env.Home: "<HOME>"}))
	if r.Stderr != "" {
		t.Errorf("stderr %q", r.Stderr)
	}
	for _, path := range []string{former, filepath.Join(env.Home, ".cline", "data", "settings", "cline_mcp_settings.json")} {
		b, _ := os.ReadFile(path)
		var cline struct {
			MCPServers map[string]struct{ Command string } `json:"mcpServers"`
		}
		if err := json.Unmarshal(b, &cline); err != nil || cline.MCPServers["osb"].Command != "osb" {
			t.Errorf("%s holds %s (%v)", path, b, err)
		}
	}
	if b, _ := os.ReadFile(former); !strings.Contains(string(b), `"mine"`) {
		t.Errorf("Cline's former file lost an entry:\n%s", b)
	}
	b, err := os.ReadFile(filepath.Join(env.Home, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	var claude struct {
		MCPServers map[string]struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &claude); err != nil {
		t.Fatal(err)
	}
	if s := claude.MCPServers["osb"]; s.Type != "stdio" || s.Command != "osb" || !slices.Equal(s.Args, []string{"mcp", "--tools", "default,command_logs"}) {
		t.Errorf("~/.claude.json holds %+v", claude)
	}
	codex, _ := os.ReadFile(filepath.Join(env.Home, ".codex", "config.toml"))
	if string(codex) != "[mcp_servers.osb]\ncommand = \"osb\"\nargs = [\"mcp\", \"--tools\", \"default,command_logs\"]\n" {
		t.Errorf("codex config:\n%s", codex)
	}

	r = env.Run("mcp", "install", "--target", "all", "--scope", "global", "--tools", "default,command_logs", "-o", "json").ExpectCode(t, 0)
	var out struct {
		Operations []struct{ Target, Status string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || len(out.Operations) != 8 {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	for _, op := range out.Operations {
		if op.Status != "already_present" {
			t.Errorf("second install of %s: %s", op.Target, op.Status)
		}
	}
	r = env.Run("mcp", "install", "--target", "codex", "--scope", "global", "--tools", "default,command_logs", "-q", "operations.0.status").ExpectCode(t, 0)
	if r.Stdout != "already_present\n" {
		t.Errorf("--jq: %q", r.Stdout)
	}
}

func TestInstallProject(t *testing.T) {
	env := cmdtest.Offline(t)
	onPath(t, env)
	dir := resolvedTempDir(t)
	t.Chdir(dir)
	os.MkdirAll(".cursor", 0o755)
	os.WriteFile(filepath.Join(".cursor", "mcp.json"), []byte(`{"mcpServers": {"other": {"command": "x"}}}`), 0o644)
	r := env.Run("mcp", "install", "--target", "all", "--scope", "project").ExpectCode(t, 0)
	want := `  installed       Claude Code [project]: .mcp.json
  installed       Cursor [project]: .cursor/mcp.json
  installed       Codex [project]: .codex/config.toml
                  Note: Codex reads .codex/config.toml only in a project you trust, and ` + dir + ` is not trusted yet: answer yes when Codex asks whether to trust it, or add [projects."` + dir + `"] trust_level = "trusted" to ` + filepath.Join(env.Home, ".codex", "config.toml") + `.
  installed       GitHub Copilot [project]: .vscode/mcp.json
  skipped         Windsurf [project]: Windsurf reads MCP servers from a user-level file only: use --scope global
  skipped         Cline [project]: Cline reads MCP servers from a user-level file only: use --scope global
  installed       OpenCode [project]: opencode.json

Done. Restart your coding tool so that it starts the MCP server.
`
	if r.Stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.Stdout, want)
	}
	cursor, _ := os.ReadFile(filepath.Join(".cursor", "mcp.json"))
	if !strings.Contains(string(cursor), `"other"`) || !strings.Contains(string(cursor), `"osb"`) {
		t.Errorf(".cursor/mcp.json lost an entry:\n%s", cursor)
	}
	var entries []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			entries = append(entries, filepath.ToSlash(rel))
		}
		return nil
	})
	files := []string{".codex/config.toml", ".cursor/mcp.json", ".mcp.json", ".vscode/mcp.json", "opencode.json"}
	if !slices.Equal(entries, files) {
		t.Errorf("files %v, want %v", entries, files)
	}

	// Once Codex trusts the project (its git root, exactly), no note.
	os.Mkdir(filepath.Join(dir, ".git"), 0o755)
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	t.Chdir(filepath.Join(dir, "sub"))
	os.MkdirAll(filepath.Join(env.Home, ".codex"), 0o755)
	os.WriteFile(filepath.Join(env.Home, ".codex", "config.toml"), []byte(fmt.Sprintf("[mcp_servers.osb]\ncommand = \"osb\"\nargs = [\"mcp\"]\n\n[projects.%q]\ntrust_level = \"trusted\"\n", dir)), 0o600)
	r = env.Run("mcp", "install", "--target", "codex", "--scope", "project", "-o", "json").ExpectCode(t, 0)
	if strings.Contains(r.Stdout, `"note"`) || !strings.Contains(r.Stdout, `"status": "installed"`) {
		t.Errorf("codex in a trusted project:\n%s", r.Stdout)
	}
	t.Chdir(dir)

	r = env.Run("mcp", "install", "--target", "windsurf", "--scope", "project").ExpectCode(t, 2)
	if !strings.Contains(r.Stderr, "Windsurf reads MCP servers from a user-level file only: use --scope global") {
		t.Errorf("windsurf project: %q", r.Stderr)
	}
}

func TestInstallErrors(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--scope", "global"}, 2, "Error: --target is required: one of claude, cursor, codex, copilot, windsurf, cline, opencode, or all\n"},
		{[]string{"--target", "claude"}, 2, "Error: --scope is required: project (the current directory) or global (your home directory)\n"},
		{[]string{"--target", "vim", "--scope", "global"}, 2, "invalid argument \"vim\" for \"-t, --target\""},
		{[]string{"--target", "claude", "--scope", "global", "--tools", "nope"}, 2, `Error: unknown tool "nope" in --tools`},
		{[]string{"--target", "claude", "--scope", "global", "--command", ""}, 2, "Error: --name and --command must not be empty\n"},
	} {
		r := env.Run(append([]string{"mcp", "install"}, c.args...)...).ExpectCode(t, c.code)
		if !strings.Contains(r.Stderr, c.want) || r.Stdout != "" {
			t.Errorf("%v: stderr %q, want %q", c.args, r.Stderr, c.want)
		}
	}
	if entries, _ := os.ReadDir(env.Home); len(entries) != 0 {
		t.Errorf("refused installs wrote %v", entries)
	}

	// A file osb cannot edit safely is left as it is.
	path := filepath.Join(env.Home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	jsonc := "{\n  // mine\n  \"mcpServers\": {}\n}\n"
	os.WriteFile(path, []byte(jsonc), 0o644)
	r := env.Run("mcp", "install", "--target", "cursor", "--scope", "global", "--command", "osb").ExpectCode(t, 1)
	want := "  failed          Cursor [global]: cannot update " + path + ": it is not a plain JSON object " +
		"(comments and trailing commas are not supported): invalid character '/'\n\n" +
		"Nothing was written: the files marked failed were left as they were (see why above); add the entry to them by hand.\n"
	if r.Stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.Stdout, want)
	}
	if b, _ := os.ReadFile(path); string(b) != jsonc {
		t.Errorf("the file was changed:\n%s", b)
	}
	// With other files written, the refusal is still one: exit 1, and the
	// last words say what was not done.
	r = env.Run("mcp", "install", "--target", "all", "--scope", "global", "--command", "osb").ExpectCode(t, 1)
	if !strings.Contains(r.Stdout, "  failed          Cursor [global]: cannot update ") || !strings.Contains(r.Stdout, "  installed       Claude Code [global]") ||
		!strings.HasSuffix(r.Stdout, "\nNot all done: the files marked failed were left as they were (see why above); add the entry to them by hand.\n"+
			"Restart the coding tools whose files were written so that they start the MCP server.\n") ||
		r.Stderr != "Error: 1 of 7 configurations were not written\n" {
		t.Errorf("stdout:\n%s\nstderr %q", r.Stdout, r.Stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != jsonc {
		t.Errorf("the file was changed:\n%s", b)
	}
}

// resolvedTempDir is a temporary directory by its path with symbolic
// links followed, as the working directory reports it.
func resolvedTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Without --command the entry runs "osb" only when the osb on PATH is this
// one; otherwise it runs this osb by its full path, and says so.
func TestInstallCommand(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	self, _ = filepath.EvalSymlinks(self)
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "osb"), []byte("#!/bin/sh\n"), 0o755)
	for _, c := range []struct {
		path, flag, command, note string
	}{
		{path: "", command: self, note: "Note: osb is not on your PATH, so the entries run this osb by its full path, " + self + " (--command sets another).\n"},
		{path: t.TempDir(), command: self, note: "Note: osb is not on your PATH, so the entries run this osb by its full path, " + self + " (--command sets another).\n"},
		{path: other, command: self, note: "Note: the osb on your PATH (" + filepath.Join(other, "osb") + ") is another program, so the entries run this osb by its full path, " + self + " (--command sets another).\n"},
		{path: other, flag: "/opt/osb/bin/osb", command: "/opt/osb/bin/osb"},
		{path: "", flag: "osb", command: "osb"},
	} {
		env := cmdtest.Offline(t)
		env.Vars["PATH"] = c.path
		args := []string{"mcp", "install", "--target", "claude", "--scope", "global", "-o", "json"}
		if c.flag != "" {
			args = append(args, "--command", c.flag)
		}
		r := env.Run(args...).ExpectCode(t, 0)
		var out struct{ Command string }
		json.Unmarshal([]byte(r.Stdout), &out)
		b, _ := os.ReadFile(filepath.Join(env.Home, ".claude.json"))
		var claude struct {
			MCPServers map[string]struct{ Command string } `json:"mcpServers"`
		}
		json.Unmarshal(b, &claude)
		if r.Stderr != c.note || out.Command != c.command || claude.MCPServers["osb"].Command != c.command {
			t.Errorf("PATH %q, --command %q: wrote %q (reported %q), stderr %q; want %q, stderr %q",
				c.path, c.flag, claude.MCPServers["osb"].Command, out.Command, r.Stderr, c.command, c.note)
		}
	}
}
