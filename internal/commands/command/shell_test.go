//go:build linux

package command_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// cutProxy is a loopback TCP proxy that the test can cut: every
// connection osb makes goes through it (the target address travels on the
// first line), and cut closes all of them at once.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	cuts  int
	down  bool // new connections are closed at once
	// dropping: what clients send is read and thrown away (a stalled
	// network); dropped counts it.
	dropping bool
	dropped  int
}

func newCutProxy(t *testing.T) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *cutProxy) serve(c net.Conn) {
	target, err := bufio.NewReaderSize(c, 16).ReadString('\n') // 16: the smallest; the line is read whole, nothing after it
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		c.Close()
		return
	}
	up, err := net.Dial("tcp", strings.TrimSpace(target))
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, c, up)
	p.mu.Unlock()
	go func() { p.upstream(up, c); up.Close() }()
	io.Copy(c, up)
	c.Close()
}

// upstream copies what the client sends, unless the proxy is dropping it.
func (p *cutProxy) upstream(up, c net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		p.mu.Lock()
		drop := p.dropping
		if drop {
			p.dropped += n
		}
		p.mu.Unlock()
		if !drop && n > 0 {
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// drop starts throwing away what clients send; droppedBytes counts it.
func (p *cutProxy) drop() {
	p.mu.Lock()
	p.dropping, p.dropped = true, 0
	p.mu.Unlock()
}

func (p *cutProxy) droppedBytes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// dial is the client's way out: through the proxy.
func (p *cutProxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", p.ln.Addr().String())
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(c, "%s\n", addr); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// setDown cuts every connection and refuses new ones (down), or lets them
// through again.
func (p *cutProxy) setDown(down bool) {
	p.mu.Lock()
	p.down, p.dropping = down, false
	p.mu.Unlock()
	if down {
		p.cut()
	}
}

// cut closes every connection made so far, both sides; new ones carry
// what is sent.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropping = false
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.cuts++
}

// TestShellReconnects drives `osb command shell` on a pseudo-terminal
// while the test cuts its connection: osb takes the session up again and
// the output missed meanwhile appears once, none of it twice.
func TestShellReconnects(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t, servertest.NoIsolation)
	sh := startShellThroughProxy(t, env, env.NewSandbox())
	proxy, scr, at := sh.proxy, sh.scr, sh.at
	if raw := scr.Termios(); raw.Lflag&unix.ECHO != 0 || raw.Lflag&unix.ICANON != 0 {
		t.Errorf("the local terminal is not raw during the session: lflag %#x", raw.Lflag)
	}
	scr.Send("for i in $(seq 1 60); do echo L$i-$((i*3)); sleep 0.02; done; echo DO''NE\r")
	scr.WaitFor(at, `L10-30\r\n`)
	proxy.cut()
	end := scr.WaitFor(at, `DONE\r\n`)
	scr.WaitFor(end, `READY> `)
	out := scr.Text()[at:end]
	for i := 1; i <= 60; i++ {
		if n := strings.Count(out, fmt.Sprintf("L%d-%d\r\n", i, 3*i)); n != 1 {
			t.Errorf("line %d shown %d times", i, n)
		}
	}
	if !strings.Contains(out, "osb: connection lost") || !strings.Contains(out, "osb: reconnected") {
		t.Errorf("no word of the reconnection: %q", out)
	}
	sh.exit(4)
	if proxy.cuts == 0 {
		t.Error("the proxy was never cut")
	}
}

func TestShellPipeModeAndCommandRunStdin(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t, servertest.NoIsolation)
	in := make([]byte, 3<<20)
	for i := range in {
		in[i] = byte(i * 7) // every byte value, in every position mod 256
	}
	for _, args := range [][]string{
		{"command", "shell", sb, "--", "sh", "-c", "cat; echo done >&2; exit 3"},
		{"shell", sb, "--", "sh", "-c", "cat; echo done >&2; exit 3"},
		{"command", "run", sb, "-i", "--", "sh", "-c", "cat; echo done >&2; exit 3"},
	} {
		r := env.RunStdin(string(in), args...)
		if r.Code != 3 || r.Stdout != string(in) || r.Stderr != "done\n" {
			t.Errorf("osb %s: exit %d, stdout %d bytes (equal: %v), stderr %q", strings.Join(args[:2], " "), r.Code, len(r.Stdout), r.Stdout == string(in), r.Stderr)
		}
	}
	// A script on stdin, and the environment and working directory of a new session.
	expect(t, env.RunStdin("echo $X $(basename $PWD); exit 6", "shell", sb, "-w", "/workspace/sub", "-e", "X=x y"), 6, "x y sub\n", "")
	// command run: the environment and the directory; the output as written.
	expect(t, env.RunStdin("in", "command", "run", sb, "-i", "-w", "/tmp", "-e", "A=1", "--", "sh", "-c", `printf "%s $A $(basename $PWD)" "$(cat)"`), 0, "in 1 tmp", "")

	r := env.RunStdin("abc", "command", "run", sb, "-i", "-o", "json", "--", "sh", "-c", "cat; echo e >&2; exit 2")
	var res map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 2 {
		t.Fatalf("-o json: exit %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	if res["stdout"] != "abc" || res["stderr"] != "e\n" || res["exit_code"] != 2.0 || res["error"] != nil || len(res["execution_id"].(string)) != 36 {
		t.Errorf("-o json result: %v", res)
	}
	// Sessions made for one run are gone afterwards.
	if out := env.Must("command", "shell", "ls", sb, "-o", "json"); out != "[]\n" {
		t.Errorf("sessions left: %s", out)
	}
}

func TestShellAndRunUsageErrors(t *testing.T) {
	t.Parallel()
	env := cmdtest.Offline(t) // no server: a usage error sends no request
	env.Vars["OPEN_SANDBOX_DOMAIN"] = "127.0.0.1:1"
	cases := []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"command", "shell", "sb1", "--takeover"}, "Error: --takeover needs --session: only an existing session can be taken over\n"},
		{"", []string{"shell", "sb1", "--session", "s1", "--", "ls"}, "Error: --session attaches to a running session: --cwd, --env and a command only apply to a new one\n"},
		{"", []string{"shell", "sb1", "-e", "=v"}, "Error: invalid argument \"=v\" for \"-e, --env\" flag: the KEY before '=' is empty (see 'osb shell --help')\n"},
	}
	for _, c := range cases {
		expect(t, env.RunStdin(c.stdin, c.args...), 2, "", c.want)
	}
}

func TestShellListAndKill(t *testing.T) {
	t.Parallel()
	env, sb := newSandbox(t, servertest.NoIsolation)
	ctx := context.Background()
	c, err := client.New(client.Options{Domain: env.Server.Addr(), APIKey: servertest.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	dp, err := c.DataPlane(ctx, sb, client.PortExecd)
	if err != nil {
		t.Fatal(err)
	}
	created, err := dp.CreatePTY(ctx, client.PTYRequest{Cwd: "/tmp", Command: "sleep 1000"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.ID
	table := env.Must("command", "shell", "ls", sb)
	want := regexp.MustCompile(`^SESSION_ID +MODE +RUNNING +CONNECTED +OUTPUT_OFFSET +CREATED_AT +COMMAND *\n` +
		id + ` +- +false +false +0 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +sleep 1000 *\n$`)
	if !want.MatchString(table) {
		t.Errorf("ls table:\n%s", table)
	}
	expect(t, env.Run("command", "shell", "kill", sb, id), 0, "OK: Killed session: "+id+"\n", "")
	expect(t, env.Run("command", "shell", "kill", sb, id), 4, "", "Error: pty session "+id+" not found (HTTP 404, code CONTEXT_NOT_FOUND)\n")
}

// Against a real execd, which has no list route, ls says so.
func TestShellListOnExecd(t *testing.T) {
	t.Parallel()
	execd := http.NotFoundHandler() // execd's answer to a route it lacks
	lifecycle := http.NewServeMux()
	var addr string
	lifecycle.HandleFunc("/v1/sandboxes/{id}/endpoints/{port}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"endpoint":"` + addr + `/execd"}`))
	})
	lifecycle.Handle("/execd/", execd)
	srv := newHTTPServer(t, lifecycle)
	addr = srv
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = srv
	env.Vars["OPEN_SANDBOX_API_KEY"] = "k"
	expect(t, env.Run("command", "shell", "ls", "sb1"), 1, "",
		"Error: this execd cannot list PTY sessions: GET /pty is an osb server extension; 'osb command shell kill sb1 SESSION_ID' ends a session whose id you know\n")
}

func newHTTPServer(t *testing.T, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}
