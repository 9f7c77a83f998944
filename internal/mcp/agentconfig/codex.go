package agentconfig

import (
	"os"
	"path/filepath"

	"github.com/pelletier/go-toml/v2"
)

// CodexTrust says whether Codex trusts the project in dir, the only case
// in which it reads the project's .codex/config.toml. Codex keys trust by
// the project's root (the nearest directory above dir holding .git, else
// dir itself), exactly, in its user config as
// [projects."<root>"] trust_level = "trusted". It returns that root.
func CodexTrust(home string, getenv func(string) string, dir string) (root string, trusted bool) {
	root = projectRoot(dir)
	data, err := os.ReadFile(CodexConfig(home, getenv))
	if err != nil {
		return root, false
	}
	var cfg struct {
		Projects map[string]struct {
			TrustLevel string `toml:"trust_level"`
		} `toml:"projects"`
	}
	if toml.Unmarshal(data, &cfg) != nil {
		return root, false
	}
	return root, cfg.Projects[root].TrustLevel == "trusted"
}

// projectRoot is the nearest directory at or above dir that holds .git,
// or dir when none does.
func projectRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// CodexConfig is Codex's user config file.
func CodexConfig(home string, getenv func(string) string) string { return codexHome(home, getenv, "") }
