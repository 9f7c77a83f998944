package config_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	cfg "github.com/osb-dev/osb/internal/config"
)

func configPath(e *cmdtest.Env) string {
	return filepath.Join(e.Home, ".opensandbox", "config.toml")
}

// writeConfig puts content at path, failing the test if it cannot: a
// missing precondition must not pass for the behaviour under test.
func writeConfig(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func TestInitWritesTemplateWithPrivateMode(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	r := e.Run("config", "init").ExpectCode(t, 0)
	path := configPath(e)
	if r.Stdout != "OK: Config file created: "+path+"\n" || r.Stderr != "" {
		t.Fatalf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != cfg.Template {
		t.Fatalf("file = %q, %v", got, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("stat %v, %v; want mode 0600", st, err)
	}
}

func TestInitKeepsExistingFileUnlessForced(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	path := configPath(e)
	writeConfig(t, path, "[connection]\ndomain = \"mine\"\n", 0o600)

	r := e.Run("config", "init").ExpectCode(t, 0)
	want := "WARN: Config file already exists at " + path + ". Use --force to overwrite.\n"
	if r.Stdout != "" || r.Stderr != want {
		t.Fatalf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	r = e.Run("config", "init", "-o", "json").ExpectCode(t, 0)
	wantJSON := "{\n  \"status\": \"warning\",\n  \"message\": \"Config file already exists at " + path + ". Use --force to overwrite.\"\n}\n"
	if r.Stdout != "" || r.Stderr != wantJSON {
		t.Fatalf("json warning: stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != "[connection]\ndomain = \"mine\"\n" {
		t.Fatalf("file changed without --force: %q", b)
	}
	e.Run("config", "init", "--force").ExpectCode(t, 0)
	if b, _ := os.ReadFile(path); string(b) != cfg.Template {
		t.Fatalf("--force did not rewrite: %q", b)
	}
}

func TestInitHonoursConfigFlagAndCreatesParents(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	path := filepath.Join(t.TempDir(), "a", "b", "osb.toml")
	r := e.Run("--config", path, "config", "init", "-o", "json").ExpectCode(t, 0)
	if want := "{\n  \"status\": \"ok\",\n  \"message\": \"Config file created: " + path + "\"\n}\n"; r.Stdout != want || r.Stderr != "" {
		t.Fatalf("stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != cfg.Template {
		t.Fatalf("file = %q, %v", got, err)
	}
	if _, err := os.Stat(configPath(e)); !os.IsNotExist(err) {
		t.Fatalf("the default config file was touched too: %v", err)
	}
}

func TestShowFormats(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	e.Must("config", "init")
	e.Must("config", "set", "connection.api_key", "test-key")
	e.Must("config", "set", "connection.domain", "file.example:9000")
	e.Must("config", "set", "defaults.timeout", "15m")
	e.Vars["OPEN_SANDBOX_DOMAIN"] = "env.example:8080"
	for _, format := range []string{"table", "json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			out := e.Must("--request-timeout", "7", "config", "show", "-o", format)
			cmdtest.Golden(t, "show."+format, cmdtest.Squeeze(cmdtest.Normalize(out, map[string]string{e.Home: "$HOME"})))
		})
	}
}

func TestShowNeverPrintsTheKey(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	for _, format := range []string{"table", "json", "yaml"} {
		r := e.Run("--api-key", "super-secret-value", "config", "show", "-o", format).ExpectCode(t, 0)
		if strings.Contains(r.Stdout+r.Stderr, "super-secret-value") {
			t.Fatalf("%s output shows the key: %s", format, r.Stdout)
		}
		if !strings.Contains(r.Stdout, "su**************ue") {
			t.Fatalf("%s output lacks the masked key: %s", format, r.Stdout)
		}
	}
}

func TestPrecedenceFlagEnvFile(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	e.Must("config", "init")
	e.Must("config", "set", "connection.domain", "from-file:1")
	get := func(args ...string) string {
		return e.Must(append(args, "config", "get", "connection.domain")...)
	}
	if got := get(); got != "from-file:1\n" {
		t.Fatalf("file: %q", got)
	}
	e.Vars["OPEN_SANDBOX_DOMAIN"] = "from-env:2"
	if got := get(); got != "from-env:2\n" {
		t.Fatalf("env: %q", got)
	}
	if got := get("--domain", "from-flag:3"); got != "from-flag:3\n" {
		t.Fatalf("flag: %q", got)
	}
	// An empty value at a higher level falls through, as in the official client.
	if got := get("--domain", ""); got != "from-env:2\n" {
		t.Fatalf("empty flag: %q", got)
	}
	out := e.Must("--request-timeout", "0", "config", "get", "connection.request_timeout", "-o", "json")
	if out != "{\n  \"key\": \"connection.request_timeout\",\n  \"value\": 30,\n  \"source\": \"default\"\n}\n" {
		t.Fatalf("request_timeout 0 should fall through: %s", out)
	}
	e.Vars["OPEN_SANDBOX_USE_SERVER_PROXY"] = "YES"
	if got := e.Must("config", "get", "connection.use_server_proxy"); got != "true\n" {
		t.Fatalf("proxy env: %q", got)
	}
	if got := e.Must("--no-use-server-proxy", "config", "get", "connection.use_server_proxy"); got != "false\n" {
		t.Fatalf("explicit false flag must win: %q", got)
	}
}

func TestSetKeepsCommentsAndOtherKeys(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	path := configPath(e)
	before := "# my notes\n[connection]\n# api_key = \"x\"\ndomain = \"a:1\"  # old\nprotocol = \"http\"\n\n[output]\ncolor = true\n"
	writeConfig(t, path, before, 0o644)

	r := e.Run("config", "set", "connection.domain", "b:2").ExpectCode(t, 0)
	if r.Stdout != "OK: Set connection.domain = b:2\n" {
		t.Fatalf("stdout %q", r.Stdout)
	}
	e.Must("config", "set", "connection.request_timeout", "45")
	e.Must("config", "set", "defaults.image", `py "3"`)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# my notes\n[connection]\n# api_key = \"x\"\ndomain = \"b:2\"  # old\nprotocol = \"http\"\nrequest_timeout = 45\n\n[output]\ncolor = true\n\n[defaults]\nimage = \"py \\\"3\\\"\"\n"
	if string(got) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode().Perm())
	}
	if img := e.Must("config", "get", "defaults.image"); img != `py "3"`+"\n" {
		t.Fatalf("round trip: %q", img)
	}
}

func TestSetUncommentsTemplateLine(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	e.Must("config", "init")
	e.Must("config", "set", "connection.use_server_proxy", "TRUE")
	got, _ := os.ReadFile(configPath(e))
	want := strings.Replace(cfg.Template, "# use_server_proxy = false", "use_server_proxy = true", 1)
	if string(got) != want {
		t.Fatalf("file:\n%s", got)
	}
}

func TestSetRejectsBadInputAndChangesNothing(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	e.Must("config", "init")
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"domain", "x"}, "Error: key must be in 'section.field' format (e.g. connection.domain), got \"domain\"\n"},
		{[]string{"connection.colour", "x"}, "Error: unknown config key \"connection.colour\"; known keys: connection.api_key, connection.domain, connection.protocol, connection.request_timeout, connection.idle_timeout, connection.use_server_proxy, output.color, defaults.image, defaults.timeout\n"},
		{[]string{"connection.request_timeout", "soon"}, "Error: connection.request_timeout must be a number, got \"soon\"\n"},
		{[]string{"connection.request_timeout", "-3"}, "Error: connection.request_timeout must be a positive number of seconds, got \"-3\"\n"},
		{[]string{"output.color", "maybe"}, "Error: output.color must be true or false, got \"maybe\"\n"},
		{[]string{"connection.protocol", "ftp"}, "Error: connection.protocol must be http or https, got \"ftp\"\n"},
		{[]string{"defaults.timeout", "10x"}, "Error: defaults.timeout invalid duration '10x'. Use format like 10m, 1h30m, 90s\n"},
		// A domain no later command could use never reaches the file.
		{[]string{"connection.domain", "a b:1"}, "Error: connection.domain \"a b:1\" contains a space or a control character\n"},
		{[]string{"connection.domain", "ftp://a:1"}, "Error: connection.domain \"ftp://a:1\" has the scheme \"ftp\": use http or https\n"},
		{[]string{"connection.domain", "a:99999"}, "Error: connection.domain \"a:99999\" has the port \"99999\": use a number from 1 to 65535\n"},
		{[]string{"connection.domain", "a:1?x=1"}, "Error: connection.domain \"a:1?x=1\" contains '?' or '#': give host[:port][/path] without a query or fragment\n"},
	}
	for _, c := range cases {
		r := e.Run(append([]string{"config", "set", "--"}, c.args...)...).ExpectCode(t, 2)
		if r.Stderr != c.msg || r.Stdout != "" {
			t.Errorf("set %v: stderr %q stdout %q", c.args, r.Stderr, r.Stdout)
		}
	}
	if got, _ := os.ReadFile(configPath(e)); string(got) != cfg.Template {
		t.Fatalf("file changed by rejected sets:\n%s", got)
	}
}

func TestSetWithoutFile(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	r := e.Run("config", "set", "connection.domain", "x").ExpectCode(t, 2)
	want := "Error: config file not found: " + configPath(e) + ". Run 'osb config init' first\n"
	if r.Stderr != want {
		t.Fatalf("stderr %q", r.Stderr)
	}
	if _, err := os.Stat(configPath(e)); err == nil {
		t.Fatal("set created a file")
	}
}

func TestSetMasksSecretInMessage(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	e.Must("config", "init")
	out := e.Must("config", "set", "connection.api_key", "abcdefgh")
	if out != "OK: Set connection.api_key = ab****gh\n" {
		t.Fatalf("stdout %q", out)
	}
}

func TestBrokenFileStopsOtherCommandsButNotConfigInit(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	path := configPath(e)
	writeConfig(t, path, "[connection\n", 0o600)
	r := e.Run("sandbox", "list").ExpectCode(t, 2)
	if !strings.HasPrefix(r.Stderr, "Error: invalid config file "+path+": line 1") {
		t.Fatalf("stderr %q", r.Stderr)
	}
	e.Run("config", "init", "--force").ExpectCode(t, 0)
	if got, err := os.ReadFile(path); err != nil || string(got) != cfg.Template {
		t.Fatalf("init --force left %q, %v", got, err)
	}
	if got := e.Must("config", "get", "connection.protocol"); got != "http\n" {
		t.Fatalf("the repaired file is not read: %q", got)
	}
}

func TestGetUnknownKeyAndJSONErrorOnStderr(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	r := e.Run("config", "get", "nope.key", "-o", "json").ExpectCode(t, 2)
	if r.Stdout != "" {
		t.Fatalf("stdout %q", r.Stdout)
	}
	want := "{\n  \"status\": \"error\",\n  \"message\": \"unknown config key \\\"nope.key\\\"; known keys: connection.api_key, connection.domain, connection.protocol, connection.request_timeout, connection.idle_timeout, connection.use_server_proxy, output.color, defaults.image, defaults.timeout\",\n  \"exit_code\": 2\n}\n"
	if r.Stderr != want {
		t.Fatalf("stderr %q", r.Stderr)
	}
}

// A file the official client's `config set` wrote is read with the official
// meaning of each value: a fractional timeout, a boolean given as a word,
// and [output] color by Python's truth ("no" is a non-empty text: true).
func TestReadsWhatTheOfficialClientWrites(t *testing.T) {
	t.Parallel()
	e := cmdtest.New(t)
	path := configPath(e)
	writeConfig(t, path, "[connection]\nrequest_timeout = 1.5\nuse_server_proxy = \"yes\"\n\n[output]\ncolor = \"no\"\n", 0o600)
	got := e.Must("config", "show", "-q", "@this")
	for _, want := range []string{`"request_timeout": 1.5`, `"use_server_proxy": true`, `"color": true`} {
		if !strings.Contains(got, want) {
			t.Errorf("config show lacks %s:\n%s", want, got)
		}
	}
	e.Must("sandbox", "list")
	writeConfig(t, path, "[connection]\nuse_server_proxy = 0\nrequest_timeout = 0\n", 0o600)
	if got := e.Must("config", "show", "-q", "use_server_proxy"); got != "false\n" {
		t.Errorf("use_server_proxy = 0: %q", got)
	}
	if got := e.Must("config", "show", "-q", "request_timeout"); got != "30\n" {
		t.Errorf("request_timeout = 0 falls through to the default: %q", got)
	}
	// A value that means nothing for its key stops commands that use it,
	// naming the key; config show still shows the file.
	writeConfig(t, path, "[connection]\nuse_server_proxy = \"maybe\"\n", 0o600)
	e.Run("sandbox", "list").ExpectError(t, 2, "invalid connection.use_server_proxy in "+path+": must be true or false")
	e.Must("config", "show")
}

// What osb's `config set` writes is TOML the official client reads with the
// same meaning: numbers bare, booleans as booleans, text quoted.
func TestWritesWhatTheOfficialClientReads(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	e.Must("config", "init")
	e.Must("config", "set", "connection.request_timeout", "1.5")
	e.Must("config", "set", "connection.use_server_proxy", "yes")
	e.Must("config", "set", "connection.api_key", `a"b\c`) // any text: a domain must be one
	text, _ := os.ReadFile(configPath(e))
	for _, want := range []string{"request_timeout = 1.5\n", "use_server_proxy = true\n", `api_key = "a\"b\\c"` + "\n"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("file lacks %q:\n%s", want, text)
		}
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to read the file with tomllib")
	}
	out, err := exec.Command(python, "-c", "import json,sys,tomllib; print(json.dumps(tomllib.load(open(sys.argv[1],'rb'))['connection'], sort_keys=True))", configPath(e)).CombinedOutput()
	if err != nil {
		t.Skipf("python3 cannot read TOML here: %v %s", err, out)
	}
	if want := `{"api_key": "a\"b\\c", "request_timeout": 1.5, "use_server_proxy": true}` + "\n"; string(out) != want {
		t.Errorf("tomllib reads %s, want %s", out, want)
	}
}

// config set on a file that is not valid TOML is a usage error and leaves
// the file byte for byte as it was.
func TestSetOnABrokenFileChangesNothing(t *testing.T) {
	t.Parallel()
	e := cmdtest.Offline(t)
	path := configPath(e)
	broken := "[connection\ndomain = \"x\"\n"
	writeConfig(t, path, broken, 0o600)
	e.Run("config", "set", "connection.domain", "y").ExpectError(t, 2, "config file "+path+" is not valid TOML (line 1")
	if got, _ := os.ReadFile(path); string(got) != broken {
		t.Errorf("the file changed:\n%s", got)
	}
}
