// Package agentconfig writes the MCP client configuration of coding agents
// (Claude Code, Cursor, Codex, ...) so that they start `osb mcp`: each
// agent's file, in its own format, keeping everything else in it.
package agentconfig

import (
	"path/filepath"
)

// Agent is a coding tool whose MCP client configuration osb can write: the
// same tools `osb skills install` knows, under the same names.
type Agent struct {
	Name  string
	Label string
	// Project is the file relative to the project directory; "" when the
	// tool reads MCP servers from a user-level file only.
	Project string
	// Global is the user-level file for a home directory, an environment
	// and an operating system.
	Global func(home string, getenv func(string) string, goos string) string
	// Former is a user-level file older versions read; nil for none. It is
	// updated too, but only where it exists.
	Former func(home string, getenv func(string) string, goos string) string
	format configFormat
}

// Agents is in the order of `osb skills install`'s targets.
var Agents = []Agent{
	{Name: "claude", Label: "Claude Code", Project: ".mcp.json", format: claudeFormat,
		Global: inHome(".claude.json")},
	{Name: "cursor", Label: "Cursor", Project: filepath.Join(".cursor", "mcp.json"), format: mcpServersFormat,
		Global: inHome(".cursor", "mcp.json")},
	{Name: "codex", Label: "Codex", Project: filepath.Join(".codex", "config.toml"), format: codexFormat,
		Global: codexHome},
	{Name: "copilot", Label: "GitHub Copilot", Project: filepath.Join(".vscode", "mcp.json"), format: vscodeFormat,
		Global: func(home string, getenv func(string) string, goos string) string {
			return filepath.Join(vscodeUserDir(home, getenv, goos), "mcp.json")
		}},
	{Name: "windsurf", Label: "Windsurf", format: mcpServersFormat,
		Global: inHome(".codeium", "windsurf", "mcp_config.json")},
	{Name: "cline", Label: "Cline", format: mcpServersFormat, Global: clineSettings,
		// Before Cline kept its data in ~/.cline, the VS Code extension
		// read this one.
		Former: func(home string, getenv func(string) string, goos string) string {
			return filepath.Join(vscodeUserDir(home, getenv, goos), "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")
		}},
	{Name: "opencode", Label: "OpenCode", Project: "opencode.json", format: opencodeFormat,
		Global: func(home string, getenv func(string) string, _ string) string {
			return filepath.Join(xdgConfig(home, getenv), "opencode", "opencode.json")
		}},
}

func inHome(parts ...string) func(string, func(string) string, string) string {
	return func(home string, _ func(string) string, _ string) string {
		return filepath.Join(append([]string{home}, parts...)...)
	}
}

// codexHome honours CODEX_HOME, as Codex does.
func codexHome(home string, getenv func(string) string, _ string) string {
	if dir := getenv("CODEX_HOME"); dir != "" {
		return filepath.Join(dir, "config.toml")
	}
	return filepath.Join(home, ".codex", "config.toml")
}

// clineSettings is where current Cline reads MCP servers (its CLI, and its
// VS Code extension since it keeps its data in ~/.cline too);
// CLINE_MCP_SETTINGS_PATH names another file, as Cline honours it.
func clineSettings(home string, getenv func(string) string, _ string) string {
	if path := getenv("CLINE_MCP_SETTINGS_PATH"); path != "" {
		return path
	}
	return filepath.Join(home, ".cline", "data", "settings", "cline_mcp_settings.json")
}

func xdgConfig(home string, getenv func(string) string) string {
	if dir := getenv("XDG_CONFIG_HOME"); dir != "" {
		return dir
	}
	return filepath.Join(home, ".config")
}

// vscodeUserDir is VS Code's per-user settings folder.
func vscodeUserDir(home string, getenv func(string) string, goos string) string {
	switch goos {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "Code", "User")
	case "windows":
		if dir := getenv("APPDATA"); dir != "" {
			return filepath.Join(dir, "Code", "User")
		}
		return filepath.Join(home, "AppData", "Roaming", "Code", "User")
	}
	return filepath.Join(xdgConfig(home, getenv), "Code", "User")
}

// LookupAgent finds an agent by name.
func LookupAgent(name string) (Agent, bool) {
	for _, a := range Agents {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// AgentNames lists the agents' names in order.
func AgentNames() []string {
	names := make([]string, len(Agents))
	for i, a := range Agents {
		names[i] = a.Name
	}
	return names
}
