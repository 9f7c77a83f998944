package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// Template is what `osb config init` writes: every setting present, commented out.
const Template = `# OpenSandbox CLI configuration
# Priority: CLI flags > environment variables > this file > SDK defaults

[connection]
# api_key = "your-api-key"
# domain = "localhost:8080"
# protocol = "http"
# request_timeout = 30
# idle_timeout = 60  # osb only: seconds a stream or transfer may go without data
# use_server_proxy = false

[output]
# color = true

[defaults]
# image = "python:3.11"
# timeout = "10m"  # or "none" for manual cleanup mode
`

// WriteFile writes data to path with mode 0600 (the file may hold an API key),
// creating parent directories, and replacing any existing file atomically.
// A symlinked config (dotfiles kept elsewhere) stays a symlink: its target
// is what gets replaced.
func WriteFile(path string, data []byte) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".config-*.toml")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}
