//go:build linux

package portforward_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/coder/websocket"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/commands"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/portforward"
	"github.com/osb-dev/osb/internal/server/servertest"
)

// serverEnv, when set, makes this test binary the server the tests start
// inside a sandbox, listening on that port.
const serverEnv = "OSB_PORTFORWARD_TEST_SERVER"

func TestMain(m *testing.M) {
	if port := os.Getenv(serverEnv); port != "" {
		fmt.Fprintln(os.Stderr, http.ListenAndServe(":"+port, sandboxServer()))
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// sandboxServer is a small dev server: plain HTTP that shows the request's
// path and headers, server-sent events that wait to be released between
// events, and a WebSocket echo.
func sandboxServer() http.Handler {
	release := make(chan struct{}, 10)
	mux := http.NewServeMux()
	mux.HandleFunc("/hello/", func(w http.ResponseWriter, r *http.Request) {
		var names []string
		for k := range r.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		fmt.Fprintf(w, "hello from the sandbox: %s %s?%s\n", r.Method, r.URL.Path, r.URL.RawQuery)
		for _, k := range names {
			fmt.Fprintf(w, "%s: %s\n", k, r.Header.Get(k))
		}
	})
	mux.HandleFunc("/release", func(w http.ResponseWriter, r *http.Request) { release <- struct{}{} })
	mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 1; i <= 3; i++ {
			fmt.Fprintf(w, "data: event %d\n\n", i)
			w.(http.Flusher).Flush()
			if i < 3 {
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
		}
	})
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, append([]byte("echo: "), b...)); err != nil {
				return
			}
		}
	})
	return mux
}

func TestParseSpec(t *testing.T) {
	for in, want := range map[string]string{
		"8080": "{8080 8080}", "3000:5173": "{3000 5173}", "0:80": "{0 80}",
		"0":        "invalid port mapping '0': remote port '0' is not a number from 1 to 65535",
		"x:80":     "invalid port mapping 'x:80': local port 'x' is not a number from 0 to 65535",
		"80:70000": "invalid port mapping '80:70000': remote port '70000' is not a number from 1 to 65535",
	} {
		s, err := portforward.ParseSpec(in)
		got := fmt.Sprint(s)
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("ParseSpec(%q) = %s, want %s", in, got, want)
		}
	}
}

// forwarding is `osb sandbox port-forward` running in the background.
type forwarding struct {
	local  string          // host:port it listens on
	stop   func(os.Signal) // as NotifySignals ends the run on that signal
	done   chan int
	stderr *cmdtest.SyncBuffer
}

var forwardingRE = regexp.MustCompile(`Forwarding from (127\.0\.0\.1:\d+) -> (\d+)`)

func startForwarding(t *testing.T, env *cmdtest.Env, args ...string) *forwarding {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	out, errOut := &cmdtest.SyncBuffer{}, &cmdtest.SyncBuffer{}
	ios.Out, ios.ErrOut = out, errOut
	ctx, cancel := context.WithCancelCause(context.Background())
	f := &forwarding{stop: func(sig os.Signal) { cancel(ops.Signaled{Signal: sig}) }, done: make(chan int, 1), stderr: errOut}
	go func() {
		f.done <- commands.Run(ctx, env.Factory(ios), append([]string{"sandbox", "port-forward"}, args...))
	}()
	t.Cleanup(func() { cancel(nil); <-f.done })
	cmdtest.Eventually(t, "the forwarding line", func() bool {
		m := forwardingRE.FindStringSubmatch(out.String())
		if m != nil {
			f.local = m[1]
		}
		return m != nil || errOut.String() != ""
	})
	if f.local == "" {
		t.Fatalf("port-forward failed: %s", errOut.String())
	}
	return f
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A dev server inside a sandbox of osb server is reached from localhost:
// HTTP with path, query and the endpoint's headers, server-sent events
// as each is sent, a WebSocket echo; directly and through the server's
// proxy; and Ctrl-C ends it with exit 130, SIGTERM with 143.
func TestForwardToADevServerInASandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server inside a sandbox")
	}
	env := cmdtest.New(t)
	id := env.NewSandbox()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env.Must("cp", bin, id+":/workspace/devserver")
	env.Must("command", "run", "-d", id, "-e", serverEnv+"=8931", "--", "/workspace/devserver")

	var ep struct {
		Endpoint string            `json:"endpoint"`
		Headers  map[string]string `json:"headers"`
	}
	if err := json.Unmarshal([]byte(env.Must("sandbox", "endpoint", id, "-p", "8931", "-o", "json")), &ep); err != nil {
		t.Fatal(err)
	}

	for _, mode := range [][]string{nil, {"--use-server-proxy"}} {
		t.Run(fmt.Sprint("proxy", mode), func(t *testing.T) {
			f := startForwarding(t, env, append([]string{id[:6], "0:8931"}, mode...)...)
			base := "http://" + f.local
			var body string
			cmdtest.Eventually(t, "the dev server answering", func() bool {
				code, b := get(t, base+"/hello/a/b?x=1")
				body = b
				return code == 200
			})
			if !strings.HasPrefix(body, "hello from the sandbox: GET /hello/a/b?x=1\n") {
				t.Errorf("body %q", body)
			}
			// The endpoint itself refuses a request without its headers:
			// the forwarder is what added them.
			if len(ep.Headers) > 0 {
				if code, b := get(t, "http://"+ep.Endpoint+"/hello/a"); code != http.StatusUnauthorized && code != http.StatusForbidden {
					t.Errorf("the endpoint without its headers answered %d %s", code, b)
				}
			}
			testEvents(t, base)
			testWebSocket(t, f.local)
			sig, want := os.Signal(os.Interrupt), 130
			if mode != nil {
				sig, want = syscall.SIGTERM, 143
			}
			f.stop(sig)
			if code := <-f.done; code != want || f.stderr.String() != "" {
				t.Errorf("exit %d after %v, want %d; stderr %q", code, sig, want, f.stderr.String())
			}
			f.done <- 0 // for the cleanup
		})
	}
}

// testEvents reads the first event before the server is told to send the
// next: a forwarder that held the stream back would never deliver it.
func testEvents(t *testing.T, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdtest.ScreenWait)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	lines := bufio.NewScanner(resp.Body)
	for i := 1; i <= 3; i++ {
		want := fmt.Sprintf("data: event %d", i)
		for lines.Scan() && lines.Text() == "" {
		}
		if lines.Text() != want {
			t.Fatalf("event %d: got %q (%v)", i, lines.Text(), lines.Err())
		}
		if i < 3 {
			if code, b := get(t, base+"/release"); code != 200 {
				t.Fatalf("release: %d %s", code, b)
			}
		}
	}
}

func testWebSocket(t *testing.T, local string) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdtest.ScreenWait)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+local+"/ws", nil)
	if err != nil {
		t.Fatalf("websocket: %v", err)
	}
	defer c.CloseNow()
	for _, msg := range []string{"one", "two"} {
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_, b, err := c.Read(ctx)
		if err != nil || string(b) != "echo: "+msg {
			t.Fatalf("echo of %q: %q %v", msg, b, err)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
}

// Bad mappings are refused before any request.
func TestRefusedMappings(t *testing.T) {
	env := cmdtest.Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = "127.0.0.1:1"
	for args, want := range map[string]string{
		"sb 99999":               "invalid port mapping '99999': remote port '99999' is not a number from 1 to 65535",
		"sb 8080 8080":           "local port 8080 is given twice",
		"sb":                     "missing [LOCAL:]REMOTE",
		"sb 80 --address nohost": "--address must be an IP address or localhost, not 'nohost'",
	} {
		env.Run(append([]string{"sandbox", "port-forward"}, strings.Fields(args)...)...).ExpectError(t, 2, want)
	}
}

// The endpoint's headers replace what the local client sent under the same
// names, and the endpoint's path prefix comes before the request's path.
func TestHandlerAddsHeadersAndKeepsThePrefix(t *testing.T) {
	var got *http.Request
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Write([]byte("ok"))
	}))
	defer upstream.Close()
	base, _ := url.Parse(upstream.URL + "/sandboxes/sb/proxy/80")
	h := portforward.Handler(base, map[string]string{"OpenSandbox-Ingress-To": "sb-80", "X-Secret": "s3"}, portforward.Transport(), t.Logf)
	local := httptest.NewServer(h)
	defer local.Close()
	req, _ := http.NewRequest(http.MethodPost, local.URL+"/api/items?id=7", strings.NewReader("body"))
	req.Header.Set("X-Secret", "forged")
	req.Header.Set("X-Mine", "kept")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.URL.Path != "/sandboxes/sb/proxy/80/api/items" || got.URL.RawQuery != "id=7" || got.Method != http.MethodPost {
		t.Errorf("upstream got %s %s?%s", got.Method, got.URL.Path, got.URL.RawQuery)
	}
	if got.Header.Get("X-Secret") != "s3" || got.Header.Get("Opensandbox-Ingress-To") != "sb-80" || got.Header.Get("X-Mine") != "kept" {
		t.Errorf("upstream headers %v", got.Header)
	}
	if got.Host != base.Host {
		t.Errorf("Host %q, want %q", got.Host, base.Host)
	}
}

// Ctrl-C, SIGTERM and SIGHUP end a forward with the code a shell gives a
// command a signal ended, and print nothing more ('osb help exit-codes').
func TestSignalsEndAForward(t *testing.T) {
	t.Parallel()
	env := cmdtest.New(t, servertest.NoIsolation)
	id := env.NewSandbox()
	for sig, want := range map[os.Signal]int{os.Interrupt: 130, syscall.SIGTERM: 143, syscall.SIGHUP: 129} {
		f := startForwarding(t, env, id, "0:8080")
		f.stop(sig)
		if code := <-f.done; code != want || f.stderr.String() != "" {
			t.Errorf("exit %d after %v, want %d; stderr %q", code, sig, want, f.stderr.String())
		}
		f.done <- 0 // for the cleanup
	}
}
