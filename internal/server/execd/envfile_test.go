//go:build linux

package execd

import (
	"testing"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// The official SDKs' set_env appends KEY='value' to the file EXECD_ENVS
// names, and every later command, foreground or background, and every new
// session sees it: over the sandbox env, under the request's envs.
func TestEnvFileReachesCommands(t *testing.T) {
	t.Parallel()
	eachMode(t, func(t *testing.T, sb *sandbox.Sandbox, url string) {
		// What the Python SDK 1.1.1 runs for set_env("GREETING", "hello world").
		setEnv := `if [ -z "${EXECD_ENVS:-}" ]; then echo unset >&2; exit 1; fi
mkdir -p "$(dirname "$EXECD_ENVS")"
printf '%s\n' 'GREETING='"'"'hello world'"'"'' 'SANDBOX_VAR=$SANDBOX_VAR+file' >> "$EXECD_ENVS"`
		if s := summarize(events(t, url+"/command", map[string]any{"command": setEnv})); s.end != "execution_complete" {
			t.Fatalf("set_env command: %+v", s)
		}
		show := `echo "$GREETING|$SANDBOX_VAR"`
		if s := summarize(events(t, url+"/command", map[string]any{"command": show})); s.stdout != lines("hello world|from-sandbox+file") {
			t.Errorf("foreground: %+v", s)
		}
		req := map[string]any{"command": show, "envs": map[string]string{"GREETING": "from request"}}
		if s := summarize(events(t, url+"/command", req)); s.stdout != lines("from request|from-sandbox+file") {
			t.Errorf("request envs: %+v", s)
		}
		bg := summarize(events(t, url+"/command", map[string]any{"command": show, "background": true}))
		waitFinished(t, url, bg.id)
		if logs := call(t, "GET", url+"/command/"+bg.id+"/logs", nil); logs.body != "hello world|from-sandbox+file\n" {
			t.Errorf("background: %q", logs.body)
		}
		sid := createSession(t, url, nil)
		if s := sessionRun(t, url, sid, map[string]any{"command": show}); s.stdout != lines("hello world|from-sandbox+file") {
			t.Errorf("session: %+v", s)
		}
		// The file is a sandbox file like any other.
		got, err := sb.FS().ReadFile("root/.opensandbox/.env")
		if err != nil || string(got) != "GREETING='hello world'\nSANDBOX_VAR=$SANDBOX_VAR+file\n" {
			t.Errorf("env file: %q %v", got, err)
		}
	})
}
