// Package config resolves osb's settings from flags, environment variables,
// the TOML config file and defaults, remembering where each value came from.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Where a resolved value came from.
const (
	SourceFlag    = "flag"
	SourceEnv     = "env"
	SourceFile    = "file"
	SourceDefault = "default"
)

// Defaults of the official client.
const (
	DefaultDomain         = "localhost:8080"
	DefaultProtocol       = "http"
	DefaultRequestTimeout = 30
	// DefaultIdleTimeout is how many seconds a stream or a transfer may go
	// without data (execd pings its streams every 3 s).
	DefaultIdleTimeout = 60
)

// Environment variables read by osb.
const (
	EnvAPIKey         = "OPEN_SANDBOX_API_KEY"
	EnvDomain         = "OPEN_SANDBOX_DOMAIN"
	EnvProtocol       = "OPEN_SANDBOX_PROTOCOL"
	EnvRequestTimeout = "OPEN_SANDBOX_REQUEST_TIMEOUT"
	EnvIdleTimeout    = "OPEN_SANDBOX_IDLE_TIMEOUT"
	EnvUseServerProxy = "OPEN_SANDBOX_USE_SERVER_PROXY"
)

// Flags carries the root command's connection flags; zero values mean "not given".
type Flags struct {
	APIKey         string
	Domain         string
	Protocol       string
	RequestTimeout int
	IdleTimeout    int
	UseServerProxy *bool
	ConfigPath     string
}

// Config is the resolved configuration. Nil pointers stand for "not set".
type Config struct {
	Path       string
	FileExists bool
	// Named is true when --config named the file: then it must exist.
	Named bool

	APIKey         string
	Domain         string // empty when nothing set it; clients fall back to DefaultDomain
	Protocol       string
	RequestTimeout float64 // seconds; the file may give a fraction, as the official client allows
	IdleTimeout    float64 // seconds a stream or transfer may go without data (osb's own setting)
	UseServerProxy bool
	Color          bool // the file's [output] color, ignoring --no-color
	DefaultImage   *string
	DefaultTimeout *string

	// Sources maps a resolved key (api_key, domain, …) to where its value came from.
	Sources map[string]string
	// problems are values that cannot mean anything for their key (a
	// table where a domain belongs in the file, a timeout of "abc" in the
	// environment), each with its message; Validate reports them.
	problems map[string]string
}

// File is the TOML file's three sections, each value as TOML gave it
// (string, int64, float64, bool, …): the official client takes values by
// their meaning, not their TOML type (request_timeout = 1.5,
// use_server_proxy = "yes"), so the file is read untyped and each key is
// interpreted by its own rule below.
type File struct {
	Connection map[string]any
	Output     map[string]any
	Defaults   map[string]any
}

// PathFor returns the config path named by --config, or the default
// ~/.opensandbox/config.toml, home taken from getenv("HOME").
func PathFor(flag string, getenv func(string) string) string {
	if flag != "" {
		return flag
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".opensandbox", "config.toml")
}

// ReadFile parses the config file; a missing file is an empty config.
func ReadFile(path string) (*File, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{}, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot read config file %s: %w", path, err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, true, fmt.Errorf("invalid config file %s: %w", path, err)
	}
	return f, true, nil
}

// Parse reads config file text; an error names the line and column.
func Parse(data []byte) (*File, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, errors.New(tomlError(err))
	}
	section := func(name string) map[string]any {
		m, _ := doc[name].(map[string]any)
		return m
	}
	return &File{Connection: section("connection"), Output: section("output"), Defaults: section("defaults")}, nil
}

func tomlError(err error) string {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return fmt.Sprintf("line %d, column %d: %s", row, col, de.Error())
	}
	return err.Error()
}

// Load resolves every key: flag, then environment, then file, then default.
// Like the official client, a value that Python takes for false (empty
// text, a zero timeout) falls through to the next level, while
// use_server_proxy takes the first value set at all.
func Load(flags Flags, getenv func(string) string) (*Config, error) {
	path := PathFor(flags.ConfigPath, getenv)
	file, exists, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Config{Path: path, FileExists: exists, Named: flags.ConfigPath != "", Sources: map[string]string{}, problems: map[string]string{}}
	fc := file.Connection

	c.APIKey = c.pickString("api_key", flags.APIKey, getenv(EnvAPIKey), fc["api_key"], "")
	c.Domain = c.pickString("domain", flags.Domain, getenv(EnvDomain), fc["domain"], "")
	c.Protocol = c.pickString("protocol", flags.Protocol, getenv(EnvProtocol), fc["protocol"], DefaultProtocol)
	c.RequestTimeout = c.pickTimeout("request_timeout", flags.RequestTimeout, getenv(EnvRequestTimeout), fc["request_timeout"], DefaultRequestTimeout)
	c.IdleTimeout = c.pickTimeout("idle_timeout", flags.IdleTimeout, getenv(EnvIdleTimeout), fc["idle_timeout"], DefaultIdleTimeout)
	c.UseServerProxy = c.pickProxy(flags.UseServerProxy, getenv(EnvUseServerProxy), fc["use_server_proxy"])
	c.Color = true
	c.Sources["color"] = SourceDefault
	if v, ok := file.Output["color"]; ok {
		c.Color, c.Sources["color"] = truthy(v), SourceFile
	}
	c.DefaultImage = c.fileText("default_image", file.Defaults["image"])
	c.DefaultTimeout = c.fileText("default_timeout", file.Defaults["timeout"])
	return c, nil
}

// truthy is Python's truth of a TOML value, the official client's test for
// "set" and for [output] color: false, 0, "" and empty lists and tables are
// false, everything else true ("false" as text too).
func truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case int64:
		return t != 0
	case float64:
		return t != 0
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	}
	return true
}

func (c *Config) pickString(key, flag, env string, file any, def string) string {
	switch {
	case flag != "":
		c.Sources[key] = SourceFlag
		return flag
	case env != "":
		c.Sources[key] = SourceEnv
		return env
	case truthy(file):
		c.Sources[key] = SourceFile
		if s, ok := file.(string); ok {
			return s
		}
		c.fileProblem(key, "must be text")
		return fmt.Sprint(file)
	}
	c.Sources[key] = SourceDefault
	return def
}

// pickTimeout reads the flag (whole seconds), the variable (whole seconds)
// and the file (any number of seconds). A variable that is not a whole
// number falls through to the file, as the official client lets it, but is
// noted as a problem: osb refuses it rather than quietly using another value.
func (c *Config) pickTimeout(key string, flag int, env string, file any, def float64) float64 {
	if flag != 0 {
		c.Sources[key] = SourceFlag
		return float64(flag)
	}
	n, err := strconv.Atoi(strings.TrimSpace(env))
	if err == nil && n != 0 {
		c.Sources[key] = SourceEnv
		return float64(n)
	}
	if err != nil && env != "" {
		name := "OPEN_SANDBOX_" + strings.ToUpper(key)
		c.problems[key] = fmt.Sprintf("invalid %s=%q: use a whole number of seconds", name, env)
	}
	if truthy(file) {
		c.Sources[key] = SourceFile
		switch t := file.(type) {
		case int64:
			return float64(t)
		case float64:
			return t
		}
		c.fileProblem(key, "must be a number of seconds")
		return def
	}
	c.Sources[key] = SourceDefault
	return def
}

// pickProxy takes the first value set at all. The file may hold a boolean,
// or what the official client's settings model reads as one: 0 or 1, or
// words such as "yes", "off", "t", "n".
func (c *Config) pickProxy(flag *bool, env string, file any) bool {
	if flag != nil {
		c.Sources["use_server_proxy"] = SourceFlag
		return *flag
	}
	if b, ok := ParseBoolWord(env); ok {
		c.Sources["use_server_proxy"] = SourceEnv
		return b
	}
	if file != nil {
		c.Sources["use_server_proxy"] = SourceFile
		b, ok := modelBool(file)
		if !ok {
			c.fileProblem("use_server_proxy", "must be true or false")
		}
		return b
	}
	c.Sources["use_server_proxy"] = SourceDefault
	return false
}

// modelBool reads a value as the official SDK's settings model reads a
// boolean: true and false, 0 and 1, and the words below in any case.
func modelBool(v any) (value, ok bool) {
	switch t := v.(type) {
	case bool:
		return t, true
	case int64:
		return t == 1, t == 0 || t == 1
	case float64:
		return t == 1, t == 0 || t == 1
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "1", "on", "t", "true", "y", "yes":
			return true, true
		case "0", "off", "f", "false", "n", "no":
			return false, true
		}
	}
	return false, false
}

// fileText is a [defaults] value: text, or a number written as text.
func (c *Config) fileText(key string, v any) *string {
	switch v.(type) {
	case nil:
		c.Sources[key] = SourceDefault
		return nil
	case string, int64, float64:
		c.Sources[key] = SourceFile
		s := fmt.Sprint(v)
		return &s
	}
	c.Sources[key] = SourceFile
	c.fileProblem(key, "must be text")
	return nil
}

// fileProblem notes a value of the file that cannot mean anything for key.
func (c *Config) fileProblem(key, problem string) {
	c.problems[key] = fmt.Sprintf("invalid %s in %s: %s", fileKey(key), c.Path, problem)
}

// ParseBoolWord accepts 1/true/yes/on and 0/false/no/off in any case.
func ParseBoolWord(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off":
		return false, true
	}
	return false, false
}

// EffectiveDomain is the domain requests go to: the configured one or localhost:8080.
func (c *Config) EffectiveDomain() string {
	if c.Domain == "" {
		return DefaultDomain
	}
	return c.Domain
}

// MaskSecret hides all but the first and last two characters of a secret.
func MaskSecret(s string) string {
	if len(s) <= 4 {
		return strings.Repeat("*", len(s))
	}
	return s[:2] + strings.Repeat("*", len(s)-4) + s[len(s)-2:]
}
