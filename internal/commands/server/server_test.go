package server_test

import (
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// A --listen that is no address is a usage error (2) before anything
// starts, as any bad flag value is; a failure to bind is 1.
func TestListenIsCheckedFirst(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_API_KEY"] = "k"
	for _, tc := range []struct{ addr, want string }{
		{"bogus", `--listen "bogus" is not HOST:PORT, e.g. 127.0.0.1:8080 (port 0 takes a free one)`},
		{"127.0.0.1:http8080", `--listen "127.0.0.1:http8080" has the port "http8080": use a number from 0 to 65535`},
		{"127.0.0.1:70000", `--listen "127.0.0.1:70000" has the port "70000": use a number from 0 to 65535`},
	} {
		env.Run("server", "--listen", tc.addr).ExpectError(t, 2, tc.want)
	}
}
