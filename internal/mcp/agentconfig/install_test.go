package agentconfig_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/mcp/agentconfig"
)

var entry = agentconfig.Entry{Name: "osb", Command: "osb", Args: []string{"mcp"}}

func agent(t *testing.T, name string) agentconfig.Agent {
	t.Helper()
	a, ok := agentconfig.LookupAgent(name)
	if !ok {
		t.Fatalf("no agent %s", name)
	}
	return a
}

func install(t *testing.T, a agentconfig.Agent, path string, e agentconfig.Entry, want string) string {
	t.Helper()
	got, err := a.Install(path, e)
	if err != nil || got != want {
		t.Fatalf("%s: %q, %v; want %s", a.Name, got, err, want)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each agent's file gets the entry in its own shape; a second install
// changes nothing; a changed entry is updated in place.
func TestInstallFormats(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		agent, want string
	}{
		{"claude", `{
  "mcpServers": {
    "osb": {
      "args": [
        "mcp"
      ],
      "command": "osb",
      "type": "stdio"
    }
  }
}
`},
		{"cursor", `{
  "mcpServers": {
    "osb": {
      "args": [
        "mcp"
      ],
      "command": "osb"
    }
  }
}
`},
		{"copilot", `{
  "servers": {
    "osb": {
      "args": [
        "mcp"
      ],
      "command": "osb",
      "type": "stdio"
    }
  }
}
`},
		{"opencode", `{
  "mcp": {
    "osb": {
      "command": [
        "osb",
        "mcp"
      ],
      "enabled": true,
      "type": "local"
    }
  }
}
`},
		{"codex", "[mcp_servers.osb]\ncommand = \"osb\"\nargs = [\"mcp\"]\n"},
	} {
		a := agent(t, c.agent)
		path := filepath.Join(t.TempDir(), "sub", "config")
		if got := install(t, a, path, entry, agentconfig.StatusInstalled); got != c.want {
			t.Errorf("%s wrote:\n%s\nwant:\n%s", c.agent, got, c.want)
		}
		info, _ := os.Stat(path)
		if got := install(t, a, path, entry, agentconfig.StatusAlreadyPresent); got != c.want {
			t.Errorf("%s: a second install changed the file:\n%s", c.agent, got)
		}
		if info2, _ := os.Stat(path); !info2.ModTime().Equal(info.ModTime()) {
			t.Errorf("%s: a second install rewrote the file", c.agent)
		}
		changed := agentconfig.Entry{Name: "osb", Command: "/opt/osb", Args: []string{"mcp", "--tools", "all"}}
		if got := install(t, a, path, changed, agentconfig.StatusUpdated); !strings.Contains(got, `"/opt/osb"`) || !strings.Contains(got, `"--tools"`) || strings.Count(got, `"osb"`) > 1 {
			t.Errorf("%s after update:\n%s", c.agent, got)
		}
	}
}

// Everything else in the file survives, in its order.
func TestInstallKeepsOtherEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude.json")
	orig := `{"numStartups": 3, "mcpServers": {"github": {"command": "gh-mcp", "args": []}}, "projects": {"/x": {"allowedTools": ["a"]}}}`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	got := install(t, agent(t, "claude"), path, entry, agentconfig.StatusInstalled)
	want := `{
  "numStartups": 3,
  "mcpServers": {
    "github": {
      "command": "gh-mcp",
      "args": []
    },
    "osb": {
      "args": [
        "mcp"
      ],
      "command": "osb",
      "type": "stdio"
    }
  },
  "projects": {
    "/x": {
      "allowedTools": [
        "a"
      ]
    }
  }
}
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", info.Mode().Perm())
	}

	toml := filepath.Join(dir, "config.toml")
	codex := "# my settings\nmodel = \"o3\"\n\n[mcp_servers.osb]\ncommand = \"old\"\n\n[mcp_servers.other]\ncommand = \"x\" # keep me\n"
	os.WriteFile(toml, []byte(codex), 0o644)
	got = install(t, agent(t, "codex"), toml, entry, agentconfig.StatusUpdated)
	wantTOML := "# my settings\nmodel = \"o3\"\n\n[mcp_servers.osb]\ncommand = \"osb\"\nargs = [\"mcp\"]\n\n[mcp_servers.other]\ncommand = \"x\" # keep me\n"
	if got != wantTOML {
		t.Errorf("codex got:\n%s\nwant:\n%s", got, wantTOML)
	}
}

// A file osb cannot read safely is left alone.
func TestInstallRefusesUnreadableFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		agent, content, want string
	}{
		{"cursor", "{\n  // comment\n  \"mcpServers\": {}\n}\n", "not a plain JSON object"},
		{"cursor", `{"mcpServers": []}`, `"mcpServers" is not an object`},
		{"codex", "model = \n", "not valid TOML"},
		{"codex", "mcp_servers = { osb = { command = \"x\" } }\n", "cannot edit"},
	} {
		path := filepath.Join(dir, c.agent+"-file")
		os.WriteFile(path, []byte(c.content), 0o644)
		_, err := agent(t, c.agent).Install(path, entry)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.content, err, c.want)
		}
		if b, _ := os.ReadFile(path); string(b) != c.content {
			t.Errorf("%q was changed to %q", c.content, b)
		}
	}
}

func TestAgentPaths(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct{ agent, goos, want string }{
		{"claude", "linux", "/h/.claude.json"},
		{"cursor", "darwin", "/h/.cursor/mcp.json"},
		{"codex", "linux", "/h/.codex/config.toml"},
		{"copilot", "linux", "/h/.config/Code/User/mcp.json"},
		{"copilot", "darwin", "/h/Library/Application Support/Code/User/mcp.json"},
		{"windsurf", "linux", "/h/.codeium/windsurf/mcp_config.json"},
		{"cline", "linux", "/h/.cline/data/settings/cline_mcp_settings.json"},
		{"cline", "darwin", "/h/.cline/data/settings/cline_mcp_settings.json"},
		{"opencode", "linux", "/h/.config/opencode/opencode.json"},
	} {
		if got := filepath.ToSlash(agent(t, c.agent).Global("/h", getenv, c.goos)); got != c.want {
			t.Errorf("%s on %s: %s, want %s", c.agent, c.goos, got, c.want)
		}
	}
	env["CODEX_HOME"], env["XDG_CONFIG_HOME"] = "/ch", "/xdg"
	if got := agent(t, "codex").Global("/h", getenv, "linux"); filepath.ToSlash(got) != "/ch/config.toml" {
		t.Errorf("codex with CODEX_HOME: %s", got)
	}
	if got := agent(t, "opencode").Global("/h", getenv, "linux"); filepath.ToSlash(got) != "/xdg/opencode/opencode.json" {
		t.Errorf("opencode with XDG_CONFIG_HOME: %s", got)
	}
	if got := agent(t, "cline").Former("/h", getenv, "linux"); filepath.ToSlash(got) != "/xdg/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json" {
		t.Errorf("cline's former file: %s", got)
	}
	env["CLINE_MCP_SETTINGS_PATH"] = "/elsewhere/mcp.json"
	if got := agent(t, "cline").Global("/h", getenv, "linux"); filepath.ToSlash(got) != "/elsewhere/mcp.json" {
		t.Errorf("cline with CLINE_MCP_SETTINGS_PATH: %s", got)
	}
}
