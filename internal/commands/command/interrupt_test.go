package command_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
)

func TestCtrlCStopsTheRemoteCommand(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	token := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1000000)
	p := startPiped(t, env, "command", "run", sb, "--", "sh", "-c", "echo $$; exec sleep "+token)
	pid := strings.TrimSpace(p.line(t))
	if len(procsWith(token)) == 0 {
		t.Fatal("the remote command is not running")
	}
	p.cancel() // what Ctrl-C does to the command's context
	code, rest := p.wait(t)
	want := regexp.MustCompile(`^Stopping the remote command \(Ctrl-C again to stop waiting\)\.\.\.\nInterrupted: command [0-9a-f]{32} was stopped\.\n$`)
	if code != 130 || rest != "" || !want.MatchString(p.stderr.String()) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, rest, p.stderr.String())
	}
	// Gone, as the sandbox sees it and as the host does.
	expect(t, env.Run("command", "run", sb, "--", "sh", "-c", "kill -0 "+pid+" 2>/dev/null || echo gone"), 0, "gone\n", "")
	if pids := procsWith(token); len(pids) != 0 {
		t.Errorf("still running: %v", pids)
	}
}

// When no one reads osb's output any more (osb ... | head -1), the remote
// command is stopped too, and osb exits as a command killed by SIGPIPE
// would, without a word.
func TestClosedOutputStopsTheRemoteCommand(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t)
	token := fmt.Sprintf("4000.%d", time.Now().UnixNano()%1000000)
	p := startPiped(t, env, "command", "run", sb, "--", "yes", token)
	if got := p.line(t); got != token+"\n" {
		t.Fatalf("first line %q", got)
	}
	p.pipe.Close()
	code, _ := p.wait(t)
	if code != 141 || p.stderr.String() != "" {
		t.Errorf("exit %d, stderr %q", code, p.stderr.String())
	}
	waitNoProcs(t, token)
}

func TestKillAndExpiryEndSandboxProcesses(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t, func(o *server.Options) { o.MinTimeout = time.Second })
	token := fmt.Sprintf("2000.%d", time.Now().UnixNano()%1000000)
	backgroundID(t, env, "--no-use-server-proxy", sb, "sleep "+token+" & sleep "+token)
	sessionRunsInBackground(t, env, sb, "sleep "+token)
	if len(procsWith(token)) == 0 {
		t.Fatal("no process with the token")
	}
	env.Must("sandbox", "kill", sb)
	waitNoProcs(t, token)

	// The sandbox expires once the command runs, not while the test is
	// still starting it (a short timeout at create raced a loaded machine).
	expiring := env.NewSandbox("--timeout", "10m")
	token = fmt.Sprintf("3000.%d", time.Now().UnixNano()%1000000)
	backgroundID(t, env, "--no-use-server-proxy", expiring, "sleep "+token)
	if len(procsWith(token)) == 0 {
		t.Fatal("background command not running")
	}
	renewShort(t, env, expiring)
	waitNoProcs(t, token) // once the sandbox expires
}

// renewShort renews a sandbox to a lifetime of a second or so. osb sends
// the new end as a time; on a loaded machine that time may have passed when
// the server reads it (400), and then the lifetime doubles, as often as it
// takes.
func renewShort(t *testing.T, env *cmdtest.Env, sb string) {
	t.Helper()
	for secs := 1; ; secs *= 2 {
		timeout := fmt.Sprintf("%ds", secs)
		r := env.Run("sandbox", "renew", sb, "--timeout", timeout)
		if r.Code == 0 {
			return
		}
		if !strings.Contains(r.Stderr, "code DOCKER::INVALID_EXPIRATION") || secs > 60 {
			t.Fatalf("osb sandbox renew %s --timeout %s: exit %d\n%s", sb, timeout, r.Code, r.Stderr)
		}
	}
}

func sessionRunsInBackground(t *testing.T, env interface{ Must(...string) string }, sb, script string) {
	t.Helper()
	out := env.Must("command", "session", "create", sb, "-o", "yaml")
	sid := strings.TrimSpace(regexp.MustCompile(`session_id: (\S+)`).FindStringSubmatch(out)[1])
	env.Must("command", "session", "run", sb, sid, "--", "sh", "-c", script+" >/dev/null 2>&1 &")
}
