package commands_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/build"
	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// osb version prints what --version prints, then the server's version.
func TestVersionWithServer(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t, servertest.NoIsolation)
	flag := env.Must("--version")
	out := env.Must("version")
	want := flag + "server " + env.Server.Addr() + ": version " + server.Version + "\n"
	if out != want {
		t.Errorf("osb version = %q, want %q", out, want)
	}
	var v struct {
		Version string `json:"version"`
		Server  struct {
			Domain, Version, Error string
		} `json:"server"`
	}
	if err := json.Unmarshal([]byte(env.Must("version", "-o", "json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Version != build.Version || v.Server.Domain != env.Server.Addr() || v.Server.Version != server.Version || v.Server.Error != "" {
		t.Errorf("json: %+v", v)
	}
}

// A server that is down, or a configuration that cannot be used, is
// reported on the server line, and the command still succeeds.
func TestVersionWithoutServer(t *testing.T) {
	t.Parallel()
	addr := "127.0.0.1:1" // nothing listens there
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = addr
	flag := env.Must("--version")
	r := env.Run("version").ExpectCode(t, 0)
	want := flag + "server " + addr + ": not reachable: cannot reach http://" + addr + "/v1/version: connection refused\n"
	if r.Stdout != want || r.Stderr != "" {
		t.Errorf("osb version = %+v, want %q", r, want)
	}

	env.Vars["OPEN_SANDBOX_PROTOCOL"] = "gopher"
	r = env.Run("version").ExpectCode(t, 0)
	if !strings.HasPrefix(r.Stdout, flag+"server: not configured: ") || r.Stderr != "" {
		t.Errorf("osb version with a bad protocol = %+v", r)
	}
}
