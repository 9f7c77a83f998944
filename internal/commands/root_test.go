package commands_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
)

// countingServer answers every request with an empty sandbox list and
// counts what it got.
func countingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"items":[],"pagination":{"page":1,"pageSize":20,"totalItems":0,"totalPages":0,"hasNextPage":false}}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// A bad connection setting in the environment or the config file is a
// usage error naming where it came from, and no request is sent: also
// what the official client would quietly ignore (a timeout that is not a
// number, a --config file that is not there) or wrap around (a timeout
// too large to wait).
func TestConnectionSettingsAreCheckedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	srv, requests := countingServer(t)
	for _, tc := range []struct {
		name   string
		vars   map[string]string
		file   string
		code   int
		stderr string
	}{
		{"bad protocol in env", map[string]string{"OPEN_SANDBOX_PROTOCOL": "ftp"}, "", 2,
			"Error: invalid protocol \"ftp\" from OPEN_SANDBOX_PROTOCOL: use http or https\n"},
		{"bad protocol in file", nil, "[connection]\nprotocol = \"htp\"\n", 2,
			"Error: invalid protocol \"htp\" from connection.protocol in <CONFIG>: use http or https\n"},
		{"negative timeout in env", map[string]string{"OPEN_SANDBOX_REQUEST_TIMEOUT": "-3"}, "", 2,
			"Error: invalid request timeout -3 from OPEN_SANDBOX_REQUEST_TIMEOUT: use a positive number of seconds\n"},
		{"upper-case protocol", map[string]string{"OPEN_SANDBOX_PROTOCOL": "HTTP"}, "", 0, ""},
		{"timeout that is not a number", map[string]string{"OPEN_SANDBOX_REQUEST_TIMEOUT": "abc"}, "", 2,
			"Error: invalid OPEN_SANDBOX_REQUEST_TIMEOUT=\"abc\": use a whole number of seconds\n"},
		{"timeout too large", map[string]string{"OPEN_SANDBOX_REQUEST_TIMEOUT": "18446744074"}, "", 2,
			"Error: invalid request timeout 18446744074 from OPEN_SANDBOX_REQUEST_TIMEOUT: at most 9223372036 seconds\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := cmdtest.Offline(t)
			env.Vars["OPEN_SANDBOX_DOMAIN"] = srv.URL[len("http://"):]
			for k, v := range tc.vars {
				env.Vars[k] = v
			}
			if tc.file != "" {
				env.WriteConfig(tc.file)
			}
			before := requests.Load()
			r := env.Run("sandbox", "list").ExpectCode(t, tc.code)
			stderr := strings.ReplaceAll(r.Stderr, env.Home+"/.opensandbox/config.toml", "<CONFIG>")
			if stderr != tc.stderr {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
			if sent := requests.Load() - before; (tc.code == 0) != (sent == 1) {
				t.Errorf("%d requests sent", sent)
			}
		})
	}
}

// -v logs one line per exchange on stderr: method, URL, status, duration and
// the request id; never the key.
func TestVerboseLogsEachRequest(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	id := env.NewSandbox()
	r := env.Run("-v", "--use-server-proxy", "sandbox", "health", id[:6]).ExpectCode(t, 0)
	base := regexp.QuoteMeta("http://" + env.Server.Addr())
	want := []string{
		`GET ` + base + `/v1/sandboxes/` + id[:6] + `/endpoints/44772\?use_server_proxy=true -> 404`,
		`GET ` + base + `/v1/sandboxes\?page=1&pageSize=200 -> 200`,
		`GET ` + base + `/v1/sandboxes/` + id + `/endpoints/44772\?use_server_proxy=true -> 200`,
		`GET ` + base + `/sandboxes/` + id + `/proxy/44772/ping -> 200`,
	}
	rids := []string{" request-id=[0-9a-f-]{36}", " request-id=[0-9a-f-]{36}", " request-id=[0-9a-f-]{36}",
		""} // data-plane answers are execd's, which carry no request id
	lines := strings.Split(strings.TrimSuffix(r.Stderr, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("stderr:\n%s", r.Stderr)
	}
	for i, l := range lines {
		if !regexp.MustCompile(`^\* ` + want[i] + ` \(\d[\d.]*[µmn]?s\)` + rids[i] + `$`).MatchString(l) {
			t.Errorf("line %d: %q", i+1, l)
		}
	}
	if strings.Contains(r.Stdout+r.Stderr, "test-key") {
		t.Errorf("the API key was printed")
	}
	if r.Stdout != "OK: Sandbox "+id+" is healthy\n" {
		t.Errorf("stdout %q", r.Stdout)
	}
}

// runOnTerminal runs a command line with stdout and stderr on a colour
// terminal.
func runOnTerminal(t *testing.T, env *cmdtest.Env, args ...string) cmdtest.Result {
	t.Helper()
	ios, _, stdout, stderr := iostreams.Test()
	ios.SetTTY(false, true, true)
	ios.SetANSI(true)
	code := commands.Run(t.Context(), env.Factory(ios), args)
	return cmdtest.Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: code}
}

// Colour, icons and borders appear on a terminal only; --no-color and
// [output] color = false turn all of them off, NO_COLOR (no-color.org) the
// colour alone.
func TestColourOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t)
	id := env.NewSandbox()
	r := runOnTerminal(t, env, "sandbox", "list")
	if r.Code != 0 || !strings.Contains(r.Stdout, "\x1b[1;36m"+id+"\x1b[0m") || !strings.Contains(r.Stdout, "\x1b[32m● Running\x1b[0m") {
		t.Errorf("list on a colour terminal:\n%q", r.Stdout)
	}
	r = runOnTerminal(t, env, "sandbox", "get", "nope")
	if r.Code != 4 || !strings.HasPrefix(r.Stderr, "\x1b[1;31mError:\x1b[0m Sandbox nope not found.") {
		t.Errorf("error on a colour terminal: %q", r.Stderr)
	}

	// Plain text, fitted to the terminal's width all the same (80 here):
	// the piped table, its time columns cut.
	plain := env.Run("sandbox", "list").Stdout
	day := regexp.MustCompile(`\d{4}-\d\d-\d\d`).FindString(plain)
	cut := "ID                                STATUS   IMAGE        CREATED_AT   EXPIRES_AT\n" +
		id + "  Running  python:3.11  " + day + "…  " + day + "…\n"
	for name, args := range map[string][]string{
		"--no-color": {"--no-color", "sandbox", "list"},
		"config":     {"--config", env.Home + "/nocolor.toml", "sandbox", "list"},
	} {
		os.WriteFile(env.Home+"/nocolor.toml", []byte("[output]\ncolor = false\n"), 0o600)
		if r := runOnTerminal(t, env, args...); r.Code != 0 || r.Stdout != cut || strings.Contains(r.Stdout, "\x1b") {
			t.Errorf("%s on a terminal:\n%s\nwant the plain table fitted to 80 columns:\n%s", name, r.Stdout, cut)
		}
	}
	env.Vars["NO_COLOR"] = ""
	if r := runOnTerminal(t, env, "sandbox", "list"); !strings.Contains(r.Stdout, "\x1b[") {
		t.Errorf("NO_COLOR set but empty must leave colour on:\n%q", r.Stdout)
	}
	env.Vars["NO_COLOR"] = "1"
	r = runOnTerminal(t, env, "sandbox", "list")
	if r.Code != 0 || strings.Contains(r.Stdout, "\x1b") || !strings.Contains(r.Stdout, "│ ● Running │") {
		t.Errorf("NO_COLOR on a terminal: want borders and icons without colour, got:\n%s", r.Stdout)
	}
	if r := runOnTerminal(t, env, "sandbox", "get", "nope"); !strings.HasPrefix(r.Stderr, "Error: Sandbox nope not found.") {
		t.Errorf("error under NO_COLOR: %q", r.Stderr)
	}
}
