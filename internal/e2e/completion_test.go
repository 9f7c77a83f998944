//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// Completion in plain bash, as on a machine without the bash-completion
// package: Tab completes a group, a verb, a flag, and nothing says
// "command not found".
func TestBashCompletionWithoutBashCompletion(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	bin := buildOsb(t)
	home := t.TempDir()
	// No rc files, no bash-completion: only what osb's script brings.
	rc := filepath.Join(home, "rc")
	os.WriteFile(rc, []byte("PS1='$ '\nsource <(osb completion bash)\ndeclare -F _init_completion >/dev/null && echo BASH-COMPLETION-LOADED\n"), 0o644)
	env := []string{"HOME=" + home, "PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin", "OPEN_SANDBOX_DOMAIN=" + cmdtest.ClosedAddr(t)}
	p := startOnTerminal(t, bash, env, "--noprofile", "--rcfile", rc, "-i")
	at := p.WaitFor(0, `\$ $`)
	p.Send("osb sandb\t")
	at = p.WaitFor(at, `osb sandbox $`)
	p.Send("li\t")
	at = p.WaitFor(at, `list $`)
	p.Send("--sta\t")
	p.WaitFor(at, `--state $`)
	p.Send("\x15exit\r") // Ctrl-U drops the line: no signal the test does not control
	if text := p.Text(); strings.Contains(text, "command not found") || strings.Contains(text, "BASH-COMPLETION-LOADED") {
		t.Errorf("the terminal shows:\n%s", text)
	}
}
