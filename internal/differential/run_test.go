package differential

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"

	"github.com/osb-dev/osb/internal/cmdtest"
)

// scenario is what a user does, as osb command lines; it runs once against
// each server.
type scenario struct {
	name  string
	steps []step
	// needs names what the scenario needs beyond the two servers ("mcp").
	needs string
	// local prepares the local directory {local} before the first step.
	local func(dir string) error
}

// step is one command line. Words in braces ({sb}, {local}) are the
// scenario's variables: {local} is a fresh local directory, the rest what
// earlier steps saved.
type step struct {
	name string   // its name in the table of known differences; default its number
	osb  []string // an osb command line
	host []string // else a program of this machine (curl, sh), to look at what osb did
	mcp  []string // else the official MCP client driving `osb mcp`: JSON tool calls

	stdin  string        // given on stdin; without it stdin is /dev/null
	input  func() []byte // stdin made by the test (large or binary)
	save   string        // store the trimmed stdout under this name
	until  string        // repeat, once a second for at most 90 s, until stdout matches
	filter func(string) string
	tty    []key // run on a pseudo-terminal and play these keys
	// background leaves the command running until the scenario ends (then
	// SIGINT); ready is what it prints once it serves, and its first group
	// is saved under save.
	background bool
	ready      string
	timeout    time.Duration // default 2 minutes: a hang is an outcome too
}

// key is one move on a pseudo-terminal: wait until the screen shows expect
// (a regexp), then resize it (when cols > 0) and type send.
type key struct {
	expect     string
	cols, rows int
	send       string
}

// outcome is what one step showed the user.
type outcome struct {
	step   string // its name
	line   string // the command line as run, for messages
	code   int
	stdout string
	stderr string
	unmet  string // the until pattern that never matched
}

// play is one run of a scenario against one server.
type play struct {
	tgt     target
	bin, py string // the osb binary; the MCP client's python
	home    string
	vars    map[string]string
	bg      []*background
}

type background struct {
	cmd            *exec.Cmd
	stdout, stderr *cmdtest.SyncBuffer
	name, line     string
}

// run plays every step and returns their outcomes; the sandboxes it made
// (variables named sb…) are killed at the end.
func (p *play) run(sc scenario) []outcome {
	var out []outcome
	defer p.cleanup()
	if sc.local != nil {
		if err := sc.local(p.vars["local"]); err != nil {
			return []outcome{{step: "local", code: -1, stderr: err.Error()}}
		}
	}
	for i, st := range sc.steps {
		name := st.name
		if name == "" {
			name = fmt.Sprint(i + 1)
		}
		st.name = name
		o := p.step(st)
		o.step = name
		if st.background {
			continue
		}
		out = append(out, o)
		if st.save != "" {
			p.vars[st.save] = strings.TrimSpace(o.stdout)
		}
	}
	// A background command's outcome is how it ends on Ctrl-C.
	for _, b := range p.bg {
		b.cmd.Process.Signal(syscall.SIGINT)
		code := waitCode(b.cmd, time.Minute)
		out = append(out, outcome{step: b.name, line: b.line, code: code, stdout: b.stdout.String(), stderr: b.stderr.String()})
	}
	p.bg = nil
	return out
}

func (p *play) cleanup() {
	for _, b := range p.bg {
		b.cmd.Process.Kill()
		b.cmd.Wait()
	}
	for name, id := range p.vars {
		if strings.HasPrefix(name, "sb") && id != "" {
			p.command([]string{p.bin, "sandbox", "kill", id}).Run()
		}
	}
}

// expand replaces {name} words' variables.
func (p *play) expand(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = varRE.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := p.vars[m[1:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	return out
}

var varRE = regexp.MustCompile(`\{[a-z][a-z0-9_]*\}`)

func (p *play) command(argv []string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TERM=xterm"}, p.tgt.vars...)
	cmd.Dir = p.vars["local"]
	return cmd
}

func (p *play) argv(st step) []string {
	switch {
	case st.osb != nil:
		return append([]string{p.bin}, p.expand(st.osb)...)
	case st.mcp != nil:
		return []string{p.py, "mcp_calls.py", p.bin, "mcp"}
	}
	return p.expand(st.host)
}

func (p *play) step(st step) outcome {
	argv := p.argv(st)
	line := strings.Join(argv[1:], " ")
	if st.osb != nil {
		line = "osb " + line
	}
	if st.until == "" {
		return p.once(st, argv, line)
	}
	until := regexp.MustCompile(st.until)
	var o outcome
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		if o = p.once(st, argv, line); until.MatchString(o.stdout) {
			return o
		}
		if time.Now().After(deadline) {
			o.unmet = st.until
			return o
		}
	}
}

func (p *play) once(st step, argv []string, line string) outcome {
	cmd := p.command(argv)
	if st.mcp != nil {
		cmd.Dir = testdataDir
		cmd.Stdin = strings.NewReader(strings.Join(p.expand(st.mcp), "\n"))
	}
	if st.tty != nil {
		return p.terminal(st, cmd, line)
	}
	stdout, stderr := &cmdtest.SyncBuffer{}, &cmdtest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	switch {
	case st.input != nil:
		cmd.Stdin = bytes.NewReader(st.input())
	case st.stdin != "":
		cmd.Stdin = strings.NewReader(st.stdin)
	}
	if err := cmd.Start(); err != nil {
		return outcome{line: line, code: -1, stderr: err.Error()}
	}
	if st.background {
		p.startedBackground(st, cmd, line, stdout, stderr)
		return outcome{}
	}
	timeout := st.timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	code := waitCode(cmd, timeout)
	o := outcome{line: line, code: code, stdout: stdout.String(), stderr: stderr.String()}
	if code == codeHung {
		o.stderr += fmt.Sprintf("\n[still running after %s: killed]", timeout)
	}
	if st.filter != nil {
		o.stdout = st.filter(o.stdout)
	}
	return o
}

// startedBackground waits until a background command says it is ready and
// saves what it printed there.
func (p *play) startedBackground(st step, cmd *exec.Cmd, line string, stdout, stderr *cmdtest.SyncBuffer) {
	p.bg = append(p.bg, &background{cmd: cmd, stdout: stdout, stderr: stderr, name: st.name, line: line})
	ready := regexp.MustCompile(st.ready)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if m := ready.FindStringSubmatch(stdout.String() + stderr.String()); m != nil {
			if st.save != "" && len(m) > 1 {
				p.vars[st.save] = m[1]
			}
			return
		}
	}
}

// codeHung is the exit code of a command that did not end in time.
const codeHung = -2

// waitCode waits for cmd, killing it after timeout, and returns its exit
// code (128+n for a signal, as a shell reports it).
func waitCode(cmd *exec.Cmd, timeout time.Duration) int {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		return codeHung
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// terminal runs cmd on a pseudo-terminal of 80x24 and plays the step's
// keys; stdout is all the terminal showed.
func (p *play) terminal(st step, cmd *exec.Cmd, line string) outcome {
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		return outcome{line: line, code: -1, stderr: err.Error()}
	}
	defer f.Close()
	shown := &cmdtest.SyncBuffer{}
	copied := make(chan struct{})
	go func() { io.Copy(shown, f); close(copied) }()
	var missed string
	from := 0
	for _, k := range st.tty {
		if k.expect != "" {
			at, ok := waitScreen(shown, from, k.expect)
			if !ok {
				missed = fmt.Sprintf("[the terminal never showed %q]", k.expect)
				break
			}
			from = at
		}
		if k.cols > 0 {
			pty.Setsize(f, &pty.Winsize{Cols: uint16(k.cols), Rows: uint16(k.rows)})
		}
		if k.send != "" {
			f.WriteString(k.send)
		}
	}
	code := waitCode(cmd, time.Minute)
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
	}
	return outcome{line: line, code: code, stdout: shown.String(), stderr: missed}
}

func waitScreen(shown *cmdtest.SyncBuffer, from int, expect string) (int, bool) {
	re := regexp.MustCompile(expect)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		text := shown.String()
		if loc := re.FindStringIndex(text[from:]); loc != nil {
			return from + loc[1], true
		}
	}
	return 0, false
}

// digest stands for output too long to compare line by line: its size and
// hash, and its first and last lines.
func digest(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return fmt.Sprintf("%d bytes, %d lines, sha256 %x\nfirst: %.80q\nlast: %.80q\n",
		len(s), len(lines), sha256.Sum256([]byte(s)), lines[0], lines[len(lines)-1])
}

// grep keeps the lines that match re, as `| grep` would.
func grep(re string) func(string) string {
	rx := regexp.MustCompile(re)
	return func(s string) string {
		var b strings.Builder
		for _, l := range strings.SplitAfter(s, "\n") {
			if rx.MatchString(l) {
				b.WriteString(l)
			}
		}
		return b.String()
	}
}

// listTar lists the entries of a tar stream, as `tar -tv` would, without
// owners and times: names, types, modes and sizes.
func listTar(s string) string {
	var b strings.Builder
	tr := tar.NewReader(strings.NewReader(s))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			return b.String() + "tar: " + err.Error() + "\n"
		}
		fmt.Fprintf(&b, "%c %o %d %s", h.Typeflag, h.Mode&0o7777, h.Size, h.Name)
		if h.Linkname != "" {
			fmt.Fprintf(&b, " -> %s", h.Linkname)
		}
		b.WriteString("\n")
	}
}

var testdataDir = func() string {
	d, _ := os.Getwd()
	return d + "/testdata"
}()
