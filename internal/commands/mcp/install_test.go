package mcp_test

import (
	"encoding/json"
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

func TestInstallGlobal(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	env.Vars["XDG_CONFIG_HOME"] = ""
	r := env.Run("mcp", "install", "--target", "all", "--scope", "global", "--tools", "default,command_logs").ExpectCode(t, 0)
	cmdtest.Golden(t, "install-all-global.table", cmdtest.Normalize(r.Stdout, map[string]string{env.Home: "<HOME>"}))
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
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil || len(out.Operations) != 7 {
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
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll(".cursor", 0o755)
	os.WriteFile(filepath.Join(".cursor", "mcp.json"), []byte(`{"mcpServers": {"other": {"command": "x"}}}`), 0o644)
	r := env.Run("mcp", "install", "--target", "all", "--scope", "project").ExpectCode(t, 0)
	want := `  installed       Claude Code [project]: .mcp.json
  installed       Cursor [project]: .cursor/mcp.json
  installed       Codex [project]: .codex/config.toml
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
	r := env.Run("mcp", "install", "--target", "cursor", "--scope", "global").ExpectCode(t, 1)
	if !strings.Contains(r.Stdout, "failed") || !strings.Contains(r.Stdout, "not a plain JSON object") {
		t.Errorf("stdout %q", r.Stdout)
	}
	if b, _ := os.ReadFile(path); string(b) != jsonc {
		t.Errorf("the file was changed:\n%s", b)
	}
}
