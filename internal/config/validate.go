package config

import (
	"fmt"
	"strings"
)

// Validate checks the connection settings a client is built from. Load keeps
// whatever it finds so that `config show` can display a bad value; commands
// that talk to a server call this first, so a typo in the environment or the
// file is one clear usage error naming where the value came from, rather than
// a failed request.
func (c *Config) Validate() error {
	if p := strings.ToLower(strings.TrimSpace(c.Protocol)); p != "http" && p != "https" {
		return fmt.Errorf("invalid protocol %q from %s: use http or https", c.Protocol, c.origin("protocol"))
	}
	if c.RequestTimeout < 0 {
		return fmt.Errorf("invalid request timeout %d from %s: use a positive number of seconds", c.RequestTimeout, c.origin("request_timeout"))
	}
	if c.IdleTimeout < 0 {
		return fmt.Errorf("invalid idle timeout %d from %s: use a positive number of seconds", c.IdleTimeout, c.origin("idle_timeout"))
	}
	return nil
}

// origin names where a resolved key's value came from, in the words a user
// would search for: the flag, the variable, or the file key.
func (c *Config) origin(key string) string {
	switch c.Sources[key] {
	case SourceFlag:
		return "--" + strings.ReplaceAll(key, "_", "-")
	case SourceEnv:
		return "OPEN_SANDBOX_" + strings.ToUpper(key)
	case SourceFile:
		return fmt.Sprintf("connection.%s in %s", key, c.Path)
	}
	return "the default"
}
