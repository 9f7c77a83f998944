package skills_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// The working directory of these tests is this package's directory, which
// holds no agent files, so every project-scope status is "not installed".

func TestListFormats(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	for _, format := range []string{"table", "json", "yaml"} {
		r := env.Run("skills", "list", "-o", format).ExpectCode(t, 0)
		if r.Stderr != "" {
			t.Errorf("%s: stderr %q", format, r.Stderr)
		}
		cmdtest.Golden(t, "list."+format, cmdtest.Normalize(r.Stdout, map[string]string{env.Home: "<HOME>"}))
	}
}

func TestListAfterGlobalInstall(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	// A broken config file must not matter: skills never read it.
	env.WriteConfig("[connection\n")
	out := env.Must("skills", "install", "--all-builtins", "--target", "all", "--scope", "global")
	cmdtest.Golden(t, "install-all-global.table", cmdtest.Normalize(out, map[string]string{env.Home: "<HOME>"}))
	if _, err := os.Stat(filepath.Join(env.Home, ".agents/skills/credential-vault/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	r := env.Run("skills", "list").ExpectCode(t, 0)
	cmdtest.Golden(t, "list-after-global-install.table", cmdtest.Normalize(r.Stdout, map[string]string{env.Home: "<HOME>"}))
	r = env.Run("skills", "list", "--wide").ExpectCode(t, 0)
	cmdtest.Golden(t, "list-wide-after-global-install.table", cmdtest.Normalize(r.Stdout, map[string]string{env.Home: "<HOME>"}))
	out = env.Must("skills", "uninstall", "--all-builtins", "--target", "all", "--scope", "global", "-o", "yaml")
	cmdtest.Golden(t, "uninstall-all-global.yaml", cmdtest.Normalize(out, map[string]string{env.Home: "<HOME>"}))
	entries, err := os.ReadDir(env.Home)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != ".opensandbox" {
		t.Errorf("home after uninstall holds %v, want only .opensandbox", entries)
	}
}

// The default listing fits one screen on a terminal: a line per skill and
// per tool, each cut to the width. Piped, nothing is cut.
func TestListFitsOneScreen(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	env.TTY = true
	out := env.Must("skills", "list")
	if n := strings.Count(out, "\n"); n > 24 {
		t.Errorf("skills list prints %d lines:\n%s", n, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if n := runewidth.StringWidth(line); n > 80 {
			t.Errorf("line of %d columns on an 80-column terminal: %q", n, line)
		}
	}
	if !strings.Contains(out, "…") {
		t.Errorf("nothing was cut to fit the terminal:\n%s", out)
	}
	env.TTY = false
	piped := env.Must("skills", "list")
	if strings.Contains(piped, "…") || !strings.Contains(piped,
		"Find out why a sandbox failed, hangs or cannot be reached: its state, health, scoped diagnostic logs and events, then a concrete fix.\n") {
		t.Errorf("piped output was cut:\n%s", piped)
	}
}

func TestShowFormats(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	for _, format := range []string{"table", "json", "yaml"} {
		r := env.Run("skills", "show", "credential-vault", "-o", format).ExpectCode(t, 0)
		cmdtest.Golden(t, "show-credential-vault."+format, r.Stdout)
	}
}

// Every bundled skill gives `show` something in each section it extracts.
func TestShowEverySkill(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	for _, name := range skillSlugs {
		var v map[string]any
		r := env.Run("skills", "show", name, "-o", "json").ExpectCode(t, 0)
		if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, key := range []string{"when_to_use", "quick_start", "json_shapes"} {
			if s, _ := v[key].(string); s == "" {
				t.Errorf("%s: %s is empty", name, key)
			}
		}
		if shapes, _ := v["json_shapes"].(string); !json.Valid([]byte(shapes)) {
			t.Errorf("%s: the first json block is not valid JSON:\n%s", name, shapes)
		}
		if v["content"] != strings.TrimSpace(skillText(t, name)) {
			t.Errorf("%s: content is not the bundled file", name)
		}
	}
}

func TestGuidanceErrors(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"install-no-target", []string{"skills", "install", "sandbox-lifecycle", "--scope", "project"}, 2},
		{"install-no-scope", []string{"skills", "install", "sandbox-lifecycle", "--target", "claude"}, 2},
		{"install-no-skill", []string{"skills", "install", "--target", "claude", "--scope", "global"}, 2},
		{"install-both", []string{"skills", "install", "sandbox-lifecycle", "--all-builtins", "--target", "claude", "--scope", "global"}, 2},
		{"install-unknown-skill", []string{"skills", "install", "lifecycle", "--target", "claude", "--scope", "global"}, 2},
		{"install-unknown-target", []string{"skills", "install", "sandbox-lifecycle", "--target", "vim", "--scope", "global"}, 2},
		{"install-no-target-json", []string{"skills", "install", "--scope", "global", "-o", "json"}, 2},
		{"uninstall-no-scope", []string{"skills", "uninstall", "--target", "all"}, 2},
		{"show-unknown", []string{"skills", "show", "nope"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Run(tc.args...).ExpectCode(t, tc.code)
			if r.Stdout != "" {
				t.Errorf("stdout %q", r.Stdout)
			}
			cmdtest.Golden(t, "error-"+tc.name, r.Stderr)
		})
	}
	if entries, _ := os.ReadDir(env.Home); len(entries) != 0 {
		t.Errorf("a failed command wrote to the home directory: %v", entries)
	}
}
