package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// env returns a getenv over vars, with HOME at a fresh directory.
func env(t *testing.T, vars map[string]string) func(string) string {
	home := t.TempDir()
	return func(k string) string {
		if k == "HOME" {
			return home
		}
		return vars[k]
	}
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const fullFile = `[connection]
api_key = "file-key"
domain = "file:1"
protocol = "https"
request_timeout = 11
use_server_proxy = true
[output]
color = false
[defaults]
image = "python:3.12"
timeout = "none"
`

// Each key takes the flag, else the variable, else the file, else the
// default, and Sources says which.
func TestPrecedence(t *testing.T) {
	path := writeConfig(t, fullFile)
	yes := false
	flags := Flags{APIKey: "flag-key", Domain: "flag:3", Protocol: "http", RequestTimeout: 33, UseServerProxy: &yes, ConfigPath: path}
	vars := map[string]string{EnvAPIKey: "env-key", EnvDomain: "env:2", EnvProtocol: "http", EnvRequestTimeout: "22", EnvUseServerProxy: "no"}

	c, err := Load(flags, env(t, vars))
	if err != nil {
		t.Fatal(err)
	}
	if c.APIKey != "flag-key" || c.Domain != "flag:3" || c.RequestTimeout != 33 || c.UseServerProxy || c.Sources["domain"] != SourceFlag {
		t.Errorf("flags should win: %+v", c)
	}
	c, _ = Load(Flags{ConfigPath: path}, env(t, vars))
	if c.APIKey != "env-key" || c.Domain != "env:2" || c.Protocol != "http" || c.RequestTimeout != 22 || c.UseServerProxy || c.Sources["request_timeout"] != SourceEnv {
		t.Errorf("env should beat the file: %+v", c)
	}
	c, _ = Load(Flags{ConfigPath: path}, env(t, nil))
	if c.APIKey != "file-key" || c.Protocol != "https" || c.RequestTimeout != 11 || !c.UseServerProxy || c.Color ||
		*c.DefaultImage != "python:3.12" || *c.DefaultTimeout != "none" || c.Sources["use_server_proxy"] != SourceFile || !c.FileExists {
		t.Errorf("file values: %+v", c)
	}
	c, _ = Load(Flags{ConfigPath: filepath.Join(t.TempDir(), "absent.toml")}, env(t, nil))
	if c.APIKey != "" || c.Domain != "" || c.EffectiveDomain() != DefaultDomain || c.Protocol != "http" || c.RequestTimeout != 30 ||
		c.UseServerProxy || !c.Color || c.DefaultImage != nil || c.FileExists || c.Sources["protocol"] != SourceDefault {
		t.Errorf("defaults: %+v", c)
	}
}

// Like the official client: empty strings and a zero timeout fall through to
// the next level, a request timeout that is not a number is ignored, and an
// explicit false proxy setting wins over a true one below it.
func TestTruthiness(t *testing.T) {
	path := writeConfig(t, fullFile)
	no := false
	c, err := Load(Flags{Domain: "", RequestTimeout: 0, UseServerProxy: &no, ConfigPath: path},
		env(t, map[string]string{EnvDomain: "", EnvAPIKey: "", EnvRequestTimeout: "abc", EnvUseServerProxy: "perhaps"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Domain != "file:1" || c.APIKey != "file-key" || c.RequestTimeout != 11 || c.UseServerProxy {
		t.Errorf("fall-through: %+v", c)
	}
	for _, v := range []string{"1", "TRUE", " yes ", "On"} {
		c, _ = Load(Flags{}, env(t, map[string]string{EnvUseServerProxy: v, EnvRequestTimeout: " 0 "}))
		if !c.UseServerProxy || c.Sources["use_server_proxy"] != SourceEnv || c.RequestTimeout != 30 {
			t.Errorf("%s=%q: proxy %v (%s), timeout %v", EnvUseServerProxy, v, c.UseServerProxy, c.Sources["use_server_proxy"], c.RequestTimeout)
		}
	}
}

// A bad protocol or timeout is kept by Load (config show displays it) and
// refused by Validate, which names where it came from.
func TestValidateNamesTheSource(t *testing.T) {
	path := writeConfig(t, "[connection]\nprotocol = \"ftp\"\nrequest_timeout = -5\n")
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{EnvProtocol: "gopher"}, `invalid protocol "gopher" from OPEN_SANDBOX_PROTOCOL: use http or https`},
		{nil, `invalid protocol "ftp" from connection.protocol in ` + path + `: use http or https`},
		{map[string]string{EnvProtocol: "HTTPS"}, "invalid request timeout -5 from connection.request_timeout in " + path + ": use a positive number of seconds"},
		{map[string]string{EnvProtocol: "http", EnvRequestTimeout: "-3"}, "invalid request timeout -3 from OPEN_SANDBOX_REQUEST_TIMEOUT: use a positive number of seconds"},
	} {
		c, err := Load(Flags{ConfigPath: path}, env(t, tc.vars))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("%v: Validate() = %v, want %q", tc.vars, err, tc.want)
		}
	}
	c, _ := Load(Flags{}, env(t, map[string]string{EnvProtocol: "HTTPS"}))
	if err := c.Validate(); err != nil {
		t.Errorf("protocol case is not significant: %v", err)
	}
}

// What the official client would quietly ignore or wrap around is refused
// by Validate: a timeout variable that is not a number (Load still falls
// through, for config show), a timeout too large for osb to wait, a file
// named by --config that is not there.
func TestValidateRefusesWhatWouldBeIgnored(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.toml")
	for _, tc := range []struct {
		flags Flags
		vars  map[string]string
		want  string
	}{
		{Flags{}, map[string]string{EnvRequestTimeout: "abc"}, `invalid OPEN_SANDBOX_REQUEST_TIMEOUT="abc": use a whole number of seconds`},
		{Flags{}, map[string]string{EnvIdleTimeout: "1.5"}, `invalid OPEN_SANDBOX_IDLE_TIMEOUT="1.5": use a whole number of seconds`},
		{Flags{RequestTimeout: 18446744074}, nil, "invalid request timeout 18446744074 from --request-timeout: at most 9223372036 seconds"},
		{Flags{}, map[string]string{EnvIdleTimeout: "9223372037"}, "invalid idle timeout 9223372037 from OPEN_SANDBOX_IDLE_TIMEOUT: at most 9223372036 seconds"},
		{Flags{ConfigPath: missing}, nil, "config file " + missing + " (named by --config) does not exist; run 'osb config init --config " + missing + "' to create it"},
	} {
		c, err := Load(tc.flags, env(t, tc.vars))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || err.Error() != tc.want {
			t.Errorf("%+v %v: Validate() = %v, want %q", tc.flags, tc.vars, err, tc.want)
		}
	}
	// The largest timeout that fits is fine, and so is a missing default file.
	c, _ := Load(Flags{RequestTimeout: 9223372036}, env(t, nil))
	if err := c.Validate(); err != nil {
		t.Errorf("largest timeout: %v", err)
	}
}

func TestBrokenFileNamesTheLine(t *testing.T) {
	path := writeConfig(t, "[connection]\ndomain = \n")
	_, err := Load(Flags{ConfigPath: path}, env(t, nil))
	if err == nil || !strings.HasPrefix(err.Error(), "invalid config file "+path+": line 2, column") {
		t.Fatalf("err = %v", err)
	}
}

func TestSetValue(t *testing.T) {
	for _, tc := range []struct {
		name, text, key, literal, want string
	}{
		{"uncomments the template line and keeps its note", Template, "defaults.timeout", `"30m"`,
			strings.Replace(Template, `# timeout = "10m"  # or`, `timeout = "30m"  # or`, 1)},
		{"keeps a trailing comment", "[connection]\ndomain = \"a\" # where\n", "connection.domain", `"b"`,
			"[connection]\ndomain = \"b\" # where\n"},
		{"a # inside a string is no comment", "[connection]\napi_key = \"k#1\\\"#\"\n", "connection.api_key", `"k2"`,
			"[connection]\napi_key = \"k2\"\n"},
		{"literal strings too", "[defaults]\nimage = 'a#b'  # pinned\n", "defaults.image", `"c"`,
			"[defaults]\nimage = \"c\"  # pinned\n"},
		{"an active line beats a commented one", "[output]\n# color = true\ncolor = true\n", "output.color", "false",
			"[output]\n# color = true\ncolor = false\n"},
		{"appends to the section", "[connection]\ndomain = \"a\"\n\n[output]\n", "connection.protocol", `"https"`,
			"[connection]\ndomain = \"a\"\nprotocol = \"https\"\n\n[output]\n"},
		{"adds the section", "# mine\n", "defaults.image", `"x"`, "# mine\n\n[defaults]\nimage = \"x\"\n"},
		{"a key of the same name elsewhere is left alone", "[defaults]\ntimeout = \"1m\"\n[connection]\n", "connection.timeout", "1",
			"[defaults]\ntimeout = \"1m\"\n[connection]\ntimeout = 1\n"},
	} {
		if got := SetValue(tc.text, tc.key, tc.literal); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// Writes are private (0600) even over a more open file, and a symlinked
// config stays a symlink.
func TestWriteFileModeAndSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "osb.toml")
	os.MkdirAll(filepath.Dir(target), 0o755)
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, ".opensandbox", "config.toml")
	os.MkdirAll(filepath.Dir(link), 0o700)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	b, _ := os.ReadFile(target)
	fi, _ := os.Stat(target)
	if string(b) != "new" || fi.Mode().Perm() != 0o600 {
		t.Errorf("target %q mode %v", b, fi.Mode().Perm())
	}
	fresh := filepath.Join(dir, "a", "b", "config.toml")
	if err := WriteFile(fresh, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*", ".config-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestMaskSecret(t *testing.T) {
	for in, want := range map[string]string{"": "", "abcd": "****", "abcde": "ab*de", "test-key": "te****ey"} {
		if got := MaskSecret(in); got != want {
			t.Errorf("MaskSecret(%q) = %q, want %q", in, got, want)
		}
	}
}

// osb's own idle timeout follows the same rules as the request timeout.
func TestIdleTimeout(t *testing.T) {
	path := writeConfig(t, "[connection]\nidle_timeout = 9\n")
	for _, tc := range []struct {
		flag   int
		env    string
		want   float64
		source string
	}{{4, "5", 4, SourceFlag}, {0, "5", 5, SourceEnv}, {0, "abc", 9, SourceFile}, {0, "0", 9, SourceFile}} {
		c, err := Load(Flags{IdleTimeout: tc.flag, ConfigPath: path}, env(t, map[string]string{EnvIdleTimeout: tc.env}))
		if err != nil || c.IdleTimeout != tc.want || c.Sources["idle_timeout"] != tc.source {
			t.Errorf("flag %d env %q: %v from %s (%v), want %v from %s", tc.flag, tc.env, c.IdleTimeout, c.Sources["idle_timeout"], err, tc.want, tc.source)
		}
	}
	c, _ := Load(Flags{}, env(t, nil))
	if c.IdleTimeout != DefaultIdleTimeout || c.Sources["idle_timeout"] != SourceDefault {
		t.Errorf("default: %v from %s", c.IdleTimeout, c.Sources["idle_timeout"])
	}
	c, _ = Load(Flags{}, env(t, map[string]string{EnvIdleTimeout: "-2"}))
	if err := c.Validate(); err == nil || err.Error() != "invalid idle timeout -2 from OPEN_SANDBOX_IDLE_TIMEOUT: use a positive number of seconds" {
		t.Errorf("validate: %v", err)
	}
}
