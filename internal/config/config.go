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

	APIKey         string
	Domain         string // empty when nothing set it; clients fall back to DefaultDomain
	Protocol       string
	RequestTimeout int
	IdleTimeout    int // seconds a stream or transfer may go without data (osb's own setting)
	UseServerProxy bool
	Color          bool // the file's [output] color, ignoring --no-color
	DefaultImage   *string
	DefaultTimeout *string

	// Sources maps a resolved key (api_key, domain, …) to where its value came from.
	Sources map[string]string
}

// File mirrors the TOML file. Pointers distinguish "absent" from zero values.
type File struct {
	Connection struct {
		APIKey         *string `toml:"api_key"`
		Domain         *string `toml:"domain"`
		Protocol       *string `toml:"protocol"`
		RequestTimeout *int    `toml:"request_timeout"`
		IdleTimeout    *int    `toml:"idle_timeout"`
		UseServerProxy *bool   `toml:"use_server_proxy"`
	} `toml:"connection"`
	Output struct {
		Color *bool `toml:"color"`
	} `toml:"output"`
	Defaults struct {
		Image   *string `toml:"image"`
		Timeout *string `toml:"timeout"`
	} `toml:"defaults"`
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
	var f File
	if err := toml.Unmarshal(data, &f); err != nil {
		return nil, true, fmt.Errorf("invalid config file %s: %s", path, tomlError(err))
	}
	return &f, true, nil
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
// Like the official client, an empty string or a zero timeout falls through
// to the next level, while use_server_proxy takes the first value set at all.
func Load(flags Flags, getenv func(string) string) (*Config, error) {
	path := PathFor(flags.ConfigPath, getenv)
	file, exists, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Config{Path: path, FileExists: exists, Color: true, Sources: map[string]string{}}
	fc := file.Connection

	c.APIKey = c.pickString("api_key", flags.APIKey, getenv(EnvAPIKey), fc.APIKey, "")
	c.Domain = c.pickString("domain", flags.Domain, getenv(EnvDomain), fc.Domain, "")
	c.Protocol = c.pickString("protocol", flags.Protocol, getenv(EnvProtocol), fc.Protocol, DefaultProtocol)
	c.RequestTimeout = c.pickTimeout("request_timeout", flags.RequestTimeout, getenv(EnvRequestTimeout), fc.RequestTimeout, DefaultRequestTimeout)
	c.IdleTimeout = c.pickTimeout("idle_timeout", flags.IdleTimeout, getenv(EnvIdleTimeout), fc.IdleTimeout, DefaultIdleTimeout)
	c.UseServerProxy = c.pickProxy(flags.UseServerProxy, getenv(EnvUseServerProxy), fc.UseServerProxy)
	if file.Output.Color != nil {
		c.Color = *file.Output.Color
		c.Sources["color"] = SourceFile
	} else {
		c.Sources["color"] = SourceDefault
	}
	c.DefaultImage = file.Defaults.Image
	c.DefaultTimeout = file.Defaults.Timeout
	for key, v := range map[string]*string{"default_image": c.DefaultImage, "default_timeout": c.DefaultTimeout} {
		c.Sources[key] = SourceDefault
		if v != nil {
			c.Sources[key] = SourceFile
		}
	}
	return c, nil
}

func (c *Config) pickString(key, flag, env string, file *string, def string) string {
	switch {
	case flag != "":
		c.Sources[key] = SourceFlag
		return flag
	case env != "":
		c.Sources[key] = SourceEnv
		return env
	case file != nil && *file != "":
		c.Sources[key] = SourceFile
		return *file
	}
	c.Sources[key] = SourceDefault
	return def
}

func (c *Config) pickTimeout(key string, flag int, env string, file *int, def int) int {
	if flag != 0 {
		c.Sources[key] = SourceFlag
		return flag
	}
	if n, err := strconv.Atoi(strings.TrimSpace(env)); err == nil && n != 0 {
		c.Sources[key] = SourceEnv
		return n
	}
	if file != nil && *file != 0 {
		c.Sources[key] = SourceFile
		return *file
	}
	c.Sources[key] = SourceDefault
	return def
}

func (c *Config) pickProxy(flag *bool, env string, file *bool) bool {
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
		return *file
	}
	c.Sources["use_server_proxy"] = SourceDefault
	return false
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
