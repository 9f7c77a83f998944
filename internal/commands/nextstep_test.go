package commands_test

import (
	"regexp"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server/servertest"
)

var requestID = regexp.MustCompile(`request id [0-9a-f-]+`)

// An error that has a next step says it: what lists the things there are
// after a not-found, where a directory goes instead of file upload, the
// local server when nothing listens where osb looks.
func TestErrorsSayTheNextStep(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t, servertest.NoIsolation)
	id := env.NewSandbox()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sandbox", "get", "0000"}, 4,
			"Error: Sandbox 0000 not found. (HTTP 404, code DOCKER::SANDBOX_NOT_FOUND, request id X); 'osb sandbox list' shows the sandboxes there are\n"},
		{[]string{"sandbox", "kill", "0000"}, 4,
			"Error: Sandbox 0000 not found. (HTTP 404, code DOCKER::SANDBOX_NOT_FOUND, request id X); 'osb sandbox list' shows the sandboxes there are\n"},
	} {
		r := env.Run(tc.args...).ExpectCode(t, tc.code)
		if got := requestID.ReplaceAllString(r.Stderr, "request id X"); got != tc.want || r.Stdout != "" {
			t.Errorf("osb %v: stdout %q, stderr %q, want %q", tc.args, r.Stdout, got, tc.want)
		}
	}
	// Under -o json the object is as before: the code says what it is.
	env.Run("sandbox", "get", "0000", "-o", "json", "-q", "id").ExpectCode(t, 4)

	dir := t.TempDir()
	r := env.Run("file", "upload", id, dir, "/workspace/d")
	r.ExpectError(t, 2, "local path '"+dir+"' is a directory; upload takes a file ('osb cp "+dir+" "+id+":/workspace/d' copies a directory)")

	off := cmdtest.Offline(t)
	addr := cmdtest.ClosedAddr(t)
	off.Vars["OPEN_SANDBOX_DOMAIN"] = addr
	off.Run("sandbox", "list").ExpectError(t, 6, "cannot reach http://"+addr+"/v1/sandboxes: connection refused; is a server running at "+addr+
		"? 'osb server' starts a local one, and --domain (OPEN_SANDBOX_DOMAIN) says where osb looks")
}
