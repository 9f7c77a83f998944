package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// faultCase is one case of issue 11 ("a client that never hangs, never
// leaks the key, never lies"), as the built osb meets it: a server on
// loopback misbehaving in that one way, the command line, and what osb
// must answer. In args, env, out and want, {addr} is the fault server's
// host:port, {other} the other server's, {dir} a directory of the case's
// own, and {NAME} a value serve put in run.vars.
type faultCase struct {
	name  string                      // the case, as the issue puts it
	serve func(*faultRun)             // how the server misbehaves; nil: it need not answer
	args  []string                    // after osb
	env   map[string]string           // added to the environment
	code  int                         // the exit code
	want  string                      // the last line on stderr, exactly; "": only the notes
	hint  string                      // added to want in the text line only, not under -o json
	notes []string                    // lines before it, exactly (a stop in progress)
	out   string                      // stdout, exactly
	zeros int                         // or: stdout is this many '0's and a newline, counted, not kept
	local bool                        // refused before any request: the server hears nothing
	json  bool                        // also run with -o json: the same line as an object on stderr
	sig   syscall.Signal              // sent once the first line of stdout arrived
	check func(*faultRun, *osbResult) // anything else to check (files, the other server)
}

// faultRun is one case's world: its fault server, a second server for
// redirects to go to, and a directory.
type faultRun struct {
	t     *testing.T
	f     *fake
	other *fake
	dir   string
	vars  map[string]string // set by serve: more environment
}

type osbResult struct {
	stdout, stderr string
	code           int
}

// TestIssue11Faults runs every case of issue 11 through the built osb.
// Cases that concern speed and memory (decoding rate, copies kept under
// -o json) are measured in bench/, not here. A case checked under -o json
// too is run again there, a world of its own, at the same time.
func TestIssue11Faults(t *testing.T) {
	t.Parallel()
	bin := osbBinary(t)
	for _, tc := range issue11Cases() {
		world := func(t *testing.T) *faultRun {
			t.Parallel()
			run := &faultRun{t: t, f: newFake(t), other: attacker(t), dir: t.TempDir(), vars: map[string]string{}}
			if tc.serve != nil {
				tc.serve(run)
			}
			return run
		}
		if tc.json {
			t.Run(tc.name+" (-o json)", func(t *testing.T) { world(t).checkJSON(bin, tc, tc.want) })
		}
		t.Run(tc.name, func(t *testing.T) {
			run := world(t)
			r := run.osb(bin, tc, tc.args)
			wantStderr := ""
			for _, line := range tc.notes {
				wantStderr += run.expand(line) + "\n"
			}
			if tc.want != "" {
				wantStderr += run.expand(tc.want) + run.expand(tc.hint) + "\n"
			}
			if r.code != tc.code || r.stderr != wantStderr || r.stdout != run.expand(tc.out) {
				t.Errorf("exit %d, want %d\nstderr %q\nwant   %q\nstdout %.200q\nwant   %.200q", r.code, tc.code, r.stderr, wantStderr, r.stdout, run.expand(tc.out))
			}
			if tc.check != nil {
				tc.check(run, &r)
			}
			if tc.local {
				if sent := run.f.requests(); len(sent) != 0 {
					t.Errorf("requests were sent: %v", sent)
				}
			}
		})
	}
}

// checkJSON runs the case again under -o json: nothing on stdout (output
// that arrived before a failure belongs to a result never printed), and
// the same message as one error object on stderr, with the exit code.
func (run *faultRun) checkJSON(bin string, tc faultCase, want string) {
	t := run.t
	want = run.expand(want)
	args := append([]string(nil), tc.args...)
	at := len(args)
	for i, a := range args {
		if a == "--" {
			at = i
			break
		}
	}
	args = append(args[:at], append([]string{"-o", "json"}, args[at:]...)...)
	r := run.osb(bin, tc, args)
	var obj struct {
		Status   string `json:"status"`
		Message  string `json:"message"`
		ExitCode int    `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(r.stderr), &obj); err != nil {
		t.Errorf("-o json: stderr is not one object (%v): %q", err, r.stderr)
		return
	}
	// The hint to read the help belongs to the text line only.
	msg := strings.TrimPrefix(want, "Error: ")
	if i := strings.LastIndex(msg, " (see 'osb "); i > 0 {
		msg = msg[:i]
	}
	if r.code != tc.code || obj.Status != "error" || obj.ExitCode != tc.code || obj.Message != msg || r.stdout != "" {
		t.Errorf("-o json: exit %d, stdout %q, object %+v, want exit %d and message %q", r.code, r.stdout, obj, tc.code, msg)
	}
}

// expand fills in {addr}, {other}, {dir} and the {NAME}s of run.vars.
func (run *faultRun) expand(s string) string {
	pairs := []string{"{addr}", run.f.addr(), "{other}", run.other.addr(), "{dir}", run.dir}
	for k, v := range run.vars {
		pairs = append(pairs, "{"+k+"}", v)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// osb runs the built binary with a home of its own, pointed at the fault
// server, and returns what it printed and its exit code.
func (run *faultRun) osb(bin string, tc faultCase, args []string) osbResult {
	t := run.t
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	expanded := make([]string, len(args))
	for i, a := range args {
		expanded[i] = run.expand(a)
	}
	cmd := exec.CommandContext(ctx, bin, expanded...)
	home := t.TempDir()
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPEN_SANDBOX_DOMAIN=" + run.f.addr(), "OPEN_SANDBOX_API_KEY=" + apiKey}
	for k, v := range run.vars {
		cmd.Env = append(cmd.Env, k+"="+run.expand(v))
	}
	for k, v := range tc.env {
		cmd.Env = append(cmd.Env, k+"="+run.expand(v))
	}
	cmd.Dir = run.dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	var got bytes.Buffer
	if tc.sig != 0 {
		line, err := out.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Errorf("no first line to signal after: %q %v", line, err)
		}
		cmd.Process.Signal(tc.sig)
	}
	if tc.zeros > 0 {
		z := &zeroLine{}
		io.Copy(z, out)
		if z.n != tc.zeros || !z.ok || !z.ended {
			t.Errorf("stdout: %d zeros (all zeros %v, then a newline %v), want %d", z.n, z.ok, z.ended, tc.zeros)
		}
	}
	io.Copy(&got, out)
	cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("osb %q still ran after two minutes", expanded)
	}
	return osbResult{stdout: got.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// sandboxRecord is a lifecycle record as a real server sends it.
func sandboxRecord(id string) map[string]any {
	return map[string]any{"id": id, "status": map[string]string{"state": "Running"}, "entrypoint": []string{"tail"},
		"createdAt": "2026-01-01T00:00:00Z", "expiresAt": "2026-01-01T01:00:00Z"}
}

// issue11Cases lists the issue's cases, in its order.
func issue11Cases() []faultCase {
	return []faultCase{
		// The API key follows redirects.
		{name: "a 302 to another host does not get the API key",
			serve: func(run *faultRun) {
				run.f.handle("GET /v1/sandboxes/{id}", redirect("http://"+run.other.addr()+"/steal", http.StatusFound))
			},
			args: []string{"sandbox", "get", "sb-1"}, code: 1, json: true,
			want:  "Error: the server redirected GET http://{addr}/v1/sandboxes/sb-1 to http://{other}/steal (HTTP 302); osb did not follow: it leads to another origin, and the credentials are only for http://{addr}",
			check: otherHeardNothing},
		{name: "a 307 on POST to another host does not get the API key",
			serve: func(run *faultRun) {
				run.f.handle("POST /v1/sandboxes/{id}/pause", redirect("http://"+run.other.addr()+"/steal", http.StatusTemporaryRedirect))
			},
			args: []string{"sandbox", "pause", "sb-1"}, code: 1, json: true,
			want:  "Error: the server redirected POST http://{addr}/v1/sandboxes/sb-1/pause to http://{other}/steal (HTTP 307); osb did not follow: it leads to another origin, and the credentials are only for http://{addr}",
			check: otherHeardNothing},
		{name: "a redirect from https to http does not send the key in clear text",
			serve: func(run *faultRun) {
				tls := httptest.NewTLSServer(redirect("http://"+run.other.addr()+"/v1/sandboxes/sb-1", http.StatusFound))
				run.t.Cleanup(tls.Close)
				ca := filepath.Join(run.t.TempDir(), "ca.pem")
				os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tls.Certificate().Raw}), 0o600)
				run.vars["SSL_CERT_FILE"] = ca
				run.vars["OPEN_SANDBOX_DOMAIN"] = tls.URL
				run.vars["TLS_ADDR"] = strings.TrimPrefix(tls.URL, "https://")
			},
			args: []string{"sandbox", "get", "sb-1"}, code: 1, json: true,
			want:  "Error: the server redirected GET https://{TLS_ADDR}/v1/sandboxes/sb-1 to http://{other}/v1/sandboxes/sb-1 (HTTP 302); osb did not follow: it leads from https to http, and the credentials would travel in clear text",
			check: otherHeardNothing},

		// Hangs forever.
		// "A server frozen mid-command does not hold command run -t past its
		// bound" is TestFrozenServer: a real osb server, stopped with SIGSTOP.
		{name: "a server that ignores command run -t: osb stops the command itself",
			serve: func(run *faultRun) { commandUntilStopped(run.f, true) },
			args:  []string{"command", "run", "sb-1", "-t", "1s", "--", "sleep", "100"}, code: 124,
			out:   "started\n",
			notes: []string{"The command has not ended 5s after its timeout of 1s: stopping it..."},
			want:  "Error: the command did not finish within 1s; osb stopped it, as the server had not",
			check: stoppedOnce},
		{name: "a download that stalls after 4 KB ends",
			serve: func(run *faultRun) {
				run.f.handle("GET /sb/{id}/files/download", func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Length", fmt.Sprint(1<<20))
					w.WriteHeader(200)
					w.Write(make([]byte, 4<<10))
					http.NewResponseController(w).Flush()
					run.f.hold(r)
				})
			},
			args: []string{"--idle-timeout", "1", "file", "download", "sb-1", "/workspace/report.bin", "{dir}/report.bin"}, code: 5, json: true,
			want:  "Error: download of /workspace/report.bin failed: GET http://{addr}/sb/sb-1/files/download timed out: nothing received for 1s",
			check: onlyFiles()},

		// Unbounded memory.
		{name: "a 300 MB JSON body to sandbox get is refused at the cap",
			serve: func(run *faultRun) {
				var sent atomic.Int64
				run.f.handle("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, `{"id":"sb-1","metadata":{"pad":"`)
					n, _ := io.Copy(w, io.LimitReader(zeros{}, 300<<20))
					sent.Store(n)
				})
				run.t.Cleanup(func() {
					if sent.Load() >= 300<<20 {
						run.t.Errorf("osb read the whole body, past its cap")
					}
				})
			},
			args: []string{"sandbox", "get", "sb-1"}, code: 1, json: true,
			want: "Error: the server answered GET http://{addr}/v1/sandboxes/sb-1 with a body larger than 64 MiB, more than osb reads for one answer (HTTP 200)"},
		{name: "one 200 MB stream frame arrives as one line",
			serve: func(run *faultRun) {
				run.f.handle("POST /sb/{id}/command", func(w http.ResponseWriter, r *http.Request) {
					streamStart(w)
					event(w, map[string]any{"type": "init", "text": "exec-1"})
					io.WriteString(w, `{"type":"stdout","text":"`)
					io.Copy(w, io.LimitReader(zeros{}, 200<<20))
					io.WriteString(w, "\"}\n\n")
					event(w, map[string]any{"type": "execution_complete", "execution_time": 5})
				})
			},
			args: []string{"command", "run", "sb-1", "--", "cat", "big"}, code: 0,
			zeros: 200 << 20},
		{name: "sandbox list --all stops when the server keeps announcing another page",
			serve: func(run *faultRun) {
				run.f.handle("GET /v1/sandboxes", func(w http.ResponseWriter, r *http.Request) {
					var page int
					fmt.Sscan(r.URL.Query().Get("page"), &page)
					writeJSON(w, 200, map[string]any{"items": []any{sandboxRecord("a"), sandboxRecord("b")},
						"pagination": map[string]any{"page": page, "pageSize": 2, "totalItems": 1 << 30, "totalPages": 1 << 29, "hasNextPage": true}})
				})
			},
			args: []string{"sandbox", "list", "--all"}, code: 1, json: true,
			want: "Error: stopped listing: page 2 holds the same records as page 1, and the server announces more"},

		// Lies.
		{name: "an empty 200 body is not a blank record",
			serve: func(run *faultRun) { run.f.handle("GET /v1/sandboxes/{id}", answer(200, "")) },
			args:  []string{"sandbox", "get", "sb-1"}, code: 1, json: true,
			want: "Error: the server answered GET http://{addr}/v1/sandboxes/sb-1 with an empty body where a record was expected (HTTP 200)"},
		{name: "a null 200 body is not a blank record",
			serve: func(run *faultRun) { run.f.handle("GET /v1/sandboxes/{id}", answer(200, "null")) },
			args:  []string{"sandbox", "get", "sb-1"}, code: 1, json: true,
			want: "Error: the server answered GET http://{addr}/v1/sandboxes/sb-1 with null where a record was expected (HTTP 200)"},
		{name: "a 200 body that is not a sandbox record is not a blank record",
			serve: func(run *faultRun) {
				run.f.handle("GET /v1/sandboxes/{id}", answer(200, `{"items":[],"pagination":{"page":1}}`))
			},
			args: []string{"sandbox", "get", "sb-1"}, code: 1, json: true,
			want: "Error: the server answered GET http://{addr}/v1/sandboxes/sb-1 with a record without an id where a sandbox was expected (HTTP 200)"},
		{name: "a create answered without an id is an error, and nothing is deleted",
			serve: func(run *faultRun) { run.f.handle("POST /v1/sandboxes", answer(202, `{}`)) },
			args:  []string{"sandbox", "create", "-i", "python:3.11"}, code: 1,
			want: "Error: the server answered POST http://{addr}/v1/sandboxes with a record without an id where a sandbox was expected (HTTP 202)",
			check: func(run *faultRun, _ *osbResult) {
				if got := run.f.requests(); len(got) != 1 {
					run.t.Errorf("requests %v, want the create alone", got)
				}
			}},
		{name: "osb sandbox get . is refused",
			args: []string{"sandbox", "get", "."}, code: 2, local: true, json: true,
			want: `Error: "." is not a valid SANDBOX_ID (see 'osb sandbox get --help')`},
		{name: "a domain containing ? is refused",
			args: []string{"--domain", "{addr}/?x", "sandbox", "list"}, code: 2, local: true, json: true,
			want: `Error: invalid domain: "{addr}/?x" contains '?' or '#': give host[:port][/path] without a query or fragment`},
		{name: "a domain containing # is refused",
			args: []string{"--domain", "{addr}#x", "sandbox", "list"}, code: 2, local: true, json: true,
			want: `Error: invalid domain: "{addr}#x" contains '?' or '#': give host[:port][/path] without a query or fragment`},
		{name: "a 413 during upload says too large",
			serve: func(run *faultRun) {
				run.f.handle("POST /sb/{id}/files/upload", func(w http.ResponseWriter, r *http.Request) {
					io.CopyN(io.Discard, r.Body, 1<<20)
					conn, buf := hijack(run.t, w)
					body := "<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>"
					fmt.Fprintf(buf, "HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
					buf.Flush()
					conn.Close()
				})
				os.WriteFile(filepath.Join(run.dir, "big.bin"), bytes.Repeat([]byte("x"), 32<<20), 0o600)
			},
			args: []string{"file", "upload", "sb-1", "big.bin", "/workspace/big.bin"}, code: 1, json: true,
			want: "Error: Request Entity Too Large (the server sent a non-JSON response) (HTTP 413)",
			hint: "; the request is larger than the server (or a proxy before it) accepts"},
		{name: "a 429 with a long Retry-After says rate limited",
			serve: func(run *faultRun) {
				run.f.handle("GET /v1/sandboxes/{id}", func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Retry-After", "3600")
					writeJSON(w, 429, map[string]string{"code": "TOO_MANY_REQUESTS", "message": "Slow down."})
				})
			},
			args: []string{"sandbox", "get", "sb-1"}, code: 1, json: true,
			want: "Error: Slow down. (HTTP 429, code TOO_MANY_REQUESTS, request id req-42, retry after 1h0m0s)",
			hint: "; the server is rate limiting requests"},
		{name: "a stream broken after output says it was cut",
			serve: func(run *faultRun) {
				run.f.handle("POST /sb/{id}/command", func(w http.ResponseWriter, r *http.Request) {
					streamStart(w)
					event(w, map[string]any{"type": "init", "text": "exec-1"})
					event(w, map[string]any{"type": "stdout", "text": "partial"})
					reset(run.t, w)
				})
			},
			args: []string{"command", "run", "sb-1", "--", "make"}, code: 125, out: "partial\n", json: true,
			want: "Error: the stream from http://{addr}/sb/sb-1/command broke off after output had arrived: connection reset by peer"},
		{name: "downloading a directory says it is a directory",
			serve: serveDirectory,
			args:  []string{"file", "download", "sb-1", "/workspace", "{dir}/workspace.bin"}, code: 1, json: true,
			want:  "Error: cannot download /workspace: it is a directory, not a file",
			check: onlyFiles()},
		{name: "file cat of a directory says it is a directory",
			serve: serveDirectory,
			args:  []string{"file", "cat", "sb-1", "/workspace"}, code: 1,
			want: "Error: cannot download /workspace: it is a directory, not a file"},
		{name: "file chmod --mode 4755 with the setuid bit dropped is not a success",
			serve: func(run *faultRun) {
				run.f.handle("POST /sb/{id}/files/permissions", func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) })
				run.f.handle("GET /sb/{id}/files/info", func(w http.ResponseWriter, r *http.Request) {
					p := r.URL.Query().Get("path")
					writeJSON(w, 200, map[string]any{p: map[string]any{"path": p, "type": "file", "size": 10, "mode": 755, "owner": "root", "group": "root",
						"modified_at": "2026-01-01T00:00:00Z", "created_at": "2026-01-01T00:00:00Z"}})
				})
			},
			args: []string{"file", "chmod", "sb-1", "/workspace/tool", "--mode", "4755"}, code: 1, json: true,
			want: "Error: the server did not set mode 4755 on /workspace/tool: it kept 755 and dropped the setuid, setgid and sticky bits"},

		// Caught too late, or not at all.
		{name: "a domain with a space is refused",
			args: []string{"--domain", "bad host", "sandbox", "list"}, code: 2, local: true, json: true,
			want: `Error: invalid domain: "bad host" contains a space or a control character`},
		{name: "an ftp:// domain is refused",
			args: []string{"--domain", "ftp://{addr}", "sandbox", "list"}, code: 2, local: true, json: true,
			want: `Error: invalid domain: "ftp://{addr}" has the scheme "ftp": use http or https`},
		{name: "a domain with port 99999 is refused",
			args: []string{"--domain", "127.0.0.1:99999", "sandbox", "list"}, code: 2, local: true, json: true,
			want: `Error: invalid domain: "127.0.0.1:99999" has the port "99999": use a number from 1 to 65535`},
		{name: "command run -t 0 is refused",
			args: []string{"command", "run", "sb-1", "-t", "0", "--", "true"}, code: 2, local: true, json: true,
			want: `Error: invalid argument "0" for "-t, --timeout" flag: a timeout of 0 would end at once; give a positive duration such as 30s (see 'osb command run --help')`},
		{name: "-m =v is refused",
			args: []string{"sandbox", "create", "-i", "python:3.11", "-m", "=v"}, code: 2, local: true, json: true,
			want: `Error: invalid argument "=v" for "-m, --metadata" flag: the KEY before '=' is empty (see 'osb sandbox create --help')`},
		{name: "an empty remote path is refused",
			args: []string{"file", "download", "sb-1", "", "{dir}/out.bin"}, code: 2, local: true, json: true,
			want:  "Error: REMOTE_PATH is empty (see 'osb file download --help')",
			check: onlyFiles()},
		{name: "--request-timeout 18446744074 does not wrap around",
			args: []string{"--request-timeout", "18446744074", "sandbox", "list"}, code: 2, local: true, json: true,
			want: "Error: invalid request timeout 18446744074 from --request-timeout: at most 9223372036 seconds"},
		{name: "command run -t near the largest duration does not wrap around",
			serve: func(run *faultRun) {
				run.f.handle("POST /sb/{id}/command", func(w http.ResponseWriter, r *http.Request) {
					streamStart(w)
					event(w, map[string]any{"type": "init", "text": "exec-1"})
					<-tick(300)
					event(w, map[string]any{"type": "stdout", "text": "done"})
					event(w, map[string]any{"type": "execution_complete", "execution_time": 300})
				})
				run.f.handle("DELETE /sb/{id}/command", func(w http.ResponseWriter, r *http.Request) {
					run.t.Error("osb stopped a command whose timeout is 292 years away")
				})
			},
			args: []string{"command", "run", "sb-1", "-t", "2562047h47m16s", "--", "make"}, code: 0, out: "done\n"},
		{name: "OPEN_SANDBOX_REQUEST_TIMEOUT=abc is not ignored",
			env:  map[string]string{"OPEN_SANDBOX_REQUEST_TIMEOUT": "abc"},
			args: []string{"sandbox", "list"}, code: 2, local: true, json: true,
			want: `Error: invalid OPEN_SANDBOX_REQUEST_TIMEOUT="abc": use a whole number of seconds`},
		{name: "an explicit --config naming a missing file is not ignored",
			args: []string{"--config", "{dir}/missing.toml", "sandbox", "list"}, code: 2, local: true, json: true,
			want: "Error: config file {dir}/missing.toml (named by --config) does not exist; run 'osb config init --config {dir}/missing.toml' to create it"},
		{name: "a password in the domain URL is never printed",
			serve: func(run *faultRun) {
				// Port 1, as elsewhere in the tests: a port closed after
				// listening can be taken by another test's server meanwhile.
				run.vars["OPEN_SANDBOX_DOMAIN"] = "http://admin:pa55-w0rd@127.0.0.1:1"
				run.vars["CLOSED"] = "127.0.0.1:1"
			},
			args: []string{"sandbox", "get", "sb-1"}, code: 6, json: true,
			want: "Error: cannot reach http://admin:xxxxx@{CLOSED}/v1/sandboxes/sb-1: connection refused",
			hint: "; is a server running at {CLOSED}? 'osb server' starts a local one, and --domain (OPEN_SANDBOX_DOMAIN) says where osb looks",
			check: func(run *faultRun, r *osbResult) {
				if strings.Contains(r.stdout+r.stderr, "pa55-w0rd") {
					run.t.Errorf("the password was printed: %q", r.stderr)
				}
			}},

		// Signals.
		{name: "SIGHUP stops the remote command and exits 129",
			serve: func(run *faultRun) { commandUntilStopped(run.f, false) },
			args:  []string{"command", "run", "sb-1", "--", "sleep", "100"}, sig: syscall.SIGHUP, code: 129, out: "started\n",
			notes: []string{"Stopping the remote command (Ctrl-C again to stop waiting)..."},
			want:  "Interrupted: command exec-1 was stopped.",
			check: stoppedOnce},
		{name: "a killed download's staging directory is cleaned by the next download",
			serve: func(run *faultRun) {
				run.f.handle("GET /sb/{id}/files/download", answer(200, "the report"))
				gone := exec.Command("true")
				if err := gone.Run(); err != nil {
					run.t.Fatal(err)
				}
				stale := filepath.Join(run.dir, fmt.Sprintf(".osb-download-%d-1234", gone.Process.Pid))
				os.Mkdir(stale, 0o700)
				os.WriteFile(filepath.Join(stale, "download"), []byte("half a rep"), 0o600)
			},
			args: []string{"file", "download", "sb-1", "/workspace/report.bin", "{dir}/report.bin"}, code: 0,
			out:   "OK: Downloaded: /workspace/report.bin → {dir}/report.bin\n",
			check: onlyFiles("report.bin")},
	}
}

// answer serves a fixed status and body.
func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// serveDirectory answers a download of /workspace as real execd does for a
// directory: 200 with a Content-Length no file has, then the connection
// breaks; its description says it is a directory.
func serveDirectory(run *faultRun) {
	run.f.handle("GET /sb/{id}/files/download", func(w http.ResponseWriter, r *http.Request) {
		conn, buf := hijack(run.t, w)
		io.WriteString(buf, "HTTP/1.1 200 OK\r\nAccept-Ranges: bytes\r\nContent-Length: 9223372036854775807\r\nContent-Type: application/octet-stream\r\n\r\n")
		buf.Flush()
		conn.Close()
	})
	run.f.handle("GET /sb/{id}/files/info", func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Query().Get("path")
		writeJSON(w, 200, map[string]any{p: map[string]any{"path": p, "type": "directory", "size": 4096, "mode": 755,
			"owner": "root", "group": "root", "modified_at": "2026-01-01T00:00:00Z", "created_at": "2026-01-01T00:00:00Z"}})
	})
}

// otherHeardNothing checks that the server redirected to got no request.
func otherHeardNothing(run *faultRun, _ *osbResult) {
	if got := run.other.requests(); len(got) != 0 {
		run.t.Errorf("the other server was sent %v", got)
	}
}

// onlyFiles checks that the case's directory holds these files and
// nothing else: no half download, no staging directory.
func onlyFiles(names ...string) func(*faultRun, *osbResult) {
	return func(run *faultRun, _ *osbResult) {
		entries, _ := os.ReadDir(run.dir)
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if strings.Join(got, " ") != strings.Join(names, " ") {
			run.t.Errorf("the directory holds %q, want %q", got, names)
		}
	}
}

// stoppedOnce checks that osb asked the server once to stop exec-1.
func stoppedOnce(run *faultRun, _ *osbResult) {
	if n := run.f.count("DELETE /sb/sb-1/command"); n != 1 {
		run.t.Errorf("the command was stopped %d times, want once", n)
	}
}

// zeroLine checks, as it is written, that stdout is '0's then a newline.
type zeroLine struct {
	n         int
	ok, ended bool
}

// Write looks at whole blocks (a loop over every byte of 200 MB is slow
// under -race).
func (z *zeroLine) Write(p []byte) (int, error) {
	if z.n == 0 && !z.ended {
		z.ok = true
	}
	if z.ended {
		z.ok = z.ok && len(p) == 0
		return len(p), nil
	}
	line := p
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		line, z.ended = p[:i], true
		z.ok = z.ok && i == len(p)-1
	}
	z.ok = z.ok && allZeros(line)
	z.n += len(line)
	return len(p), nil
}

// allZeros reports whether b is all '0's.
func allZeros(b []byte) bool {
	for len(b) > 0 {
		k := min(len(b), len(zeroBlock))
		if !bytes.Equal(b[:k], zeroBlock[:k]) {
			return false
		}
		b = b[k:]
	}
	return true
}
