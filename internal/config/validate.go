package config

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Validate checks the connection settings a client is built from. Load keeps
// whatever it finds so that `config show` can display a bad value; commands
// that talk to a server call this first, so a typo in the environment or the
// file is one clear usage error naming where the value came from, rather than
// a failed request.
func (c *Config) Validate() error {
	if c.Named && !c.FileExists {
		return fmt.Errorf("config file %s (named by --config) does not exist; run 'osb config init --config %s' to create it", c.Path, c.Path)
	}
	for _, key := range []string{"api_key", "domain", "protocol", "request_timeout", "idle_timeout", "use_server_proxy", "default_image", "default_timeout"} {
		if p, ok := c.problems[key]; ok {
			return errors.New(p)
		}
	}
	if p := strings.ToLower(strings.TrimSpace(c.Protocol)); p != "http" && p != "https" {
		return fmt.Errorf("invalid protocol %q from %s: use http or https", c.Protocol, c.origin("protocol"))
	}
	if err := checkSeconds(c.RequestTimeout, "request timeout", c.origin("request_timeout")); err != nil {
		return err
	}
	return checkSeconds(c.IdleTimeout, "idle timeout", c.origin("idle_timeout"))
}

// maxSeconds is the longest timeout a time.Duration holds (about 292
// years); a larger one would wrap around to a short or negative wait.
const maxSeconds = math.MaxInt64 / int64(time.Second)

func checkSeconds(v float64, what, origin string) error {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("invalid %s %v from %s: use a positive number of seconds", what, v, origin)
	}
	if v > float64(maxSeconds) {
		return fmt.Errorf("invalid %s %.0f from %s: at most %d seconds", what, v, origin, maxSeconds)
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
		return fmt.Sprintf("%s in %s", fileKey(key), c.Path)
	}
	return "the default"
}

// fileKey is a resolved key's section.field name in the file.
func fileKey(key string) string {
	switch key {
	case "default_image":
		return "defaults.image"
	case "default_timeout":
		return "defaults.timeout"
	case "color":
		return "output.color"
	}
	return "connection." + key
}
