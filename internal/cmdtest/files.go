package cmdtest

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes content to name in a fresh temp dir and returns its path:
// request files, policies, payloads.
func WriteFile(t testing.TB, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// WriteConfig writes the osb config file of the env's home.
func (e *Env) WriteConfig(toml string) {
	e.T.Helper()
	dir := filepath.Join(e.Home, ".opensandbox")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		e.T.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(toml), 0o600); err != nil {
		e.T.Fatal(err)
	}
}
