package commands_test

import (
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// An empty sandbox id is refused before any request, whatever the command.
func TestEmptySandboxIDSendsNothing(t *testing.T) {
	t.Parallel()
	e := cmdtest.New(t)
	for _, args := range [][]string{
		{"sandbox", "get", ""},
		{"sandbox", "kill", " "},
		{"command", "run", "", "--", "true"},
		{"file", "cat", "", "/workspace/x"},
		{"egress", "get", ""},
	} {
		r := e.Run(append([]string{"-v"}, args...)...)
		if r.Code != 2 || r.Stdout != "" || r.Stderr != "Error: the sandbox id must not be empty\n" {
			t.Errorf("osb %s: exit %d stdout %q stderr %q", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
}

// Input that would reach the server as something else than meant is
// refused before any request (-v would log one): an empty path, "." or ".."
// as an id, an empty KEY in KEY=VALUE, a timeout of 0.
func TestMeaninglessInputSendsNothing(t *testing.T) {
	t.Parallel()
	e := cmdtest.New(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sandbox", "get", "."}, `Error: "." is not a valid SANDBOX_ID (see 'osb sandbox get --help')`},
		{[]string{"sandbox", "kill", "sb-1", ".."}, `Error: ".." is not a valid SANDBOX_ID (see 'osb sandbox kill --help')`},
		{[]string{"command", "status", "sb-1", ".."}, `Error: ".." is not a valid EXECUTION_ID (see 'osb command status --help')`},
		{[]string{"file", "cat", "sb-1", ""}, "Error: PATH is empty (see 'osb file cat --help')"},
		{[]string{"file", "download", "sb-1", "", "out.txt"}, "Error: REMOTE_PATH is empty (see 'osb file download --help')"},
		{[]string{"file", "upload", "sb-1", "args_test.go", ""}, "Error: REMOTE_PATH is empty (see 'osb file upload --help')"},
		{[]string{"file", "rm", "sb-1", "/a", ""}, "Error: PATH is empty (see 'osb file rm --help')"},
		{[]string{"sandbox", "create", "-i", "python:3.11", "-m", "=v"}, `Error: invalid argument "=v" for "-m, --metadata" flag: the KEY before '=' is empty (see 'osb sandbox create --help')`},
		{[]string{"sandbox", "list", "-m", "=v"}, `Error: invalid argument "=v" for "-m, --metadata" flag: the KEY before '=' is empty (see 'osb sandbox list --help')`},
		{[]string{"command", "run", "sb-1", "-t", "0", "--", "true"}, `Error: invalid argument "0" for "-t, --timeout" flag: a timeout of 0 would end at once; give a positive duration such as 30s (see 'osb command run --help')`},
		{[]string{"command", "session", "run", "sb-1", "s-1", "-t", "0s", "--", "true"}, `Error: invalid argument "0s" for "-t, --timeout" flag: a timeout of 0 would end at once; give a positive duration such as 30s (see 'osb command session run --help')`},
		{[]string{"sandbox", "renew", "sb-1", "-t", "0m"}, `Error: invalid argument "0m" for "-t, --timeout" flag: a timeout of 0 would end at once; give a positive duration such as 30s (see 'osb sandbox renew --help')`},
		{[]string{"sandbox", "create", "-i", "python:3.11", "-t", "0"}, "Error: invalid --timeout: a lifetime of 0 would end the sandbox at once; give a positive duration, or none to keep it until it is killed"},
	} {
		r := e.Run(append([]string{"-v"}, tc.args...)...)
		if r.Code != 2 || r.Stdout != "" || r.Stderr != tc.want+"\n" {
			t.Errorf("osb %q: exit %d stdout %q stderr %q\nwant %q", tc.args, r.Code, r.Stdout, r.Stderr, tc.want)
		}
	}
	// An empty VALUE is a value: config set takes it.
	e.Run("config", "init").ExpectCode(t, 0)
	e.Run("config", "set", "connection.domain", "").ExpectCode(t, 0)
}
