package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// refused runs `osb server` with args and env, expecting it to refuse at
// once with exit 2 and one Error line holding want, never listening.
func refused(t *testing.T, bin string, env []string, want string, args ...string) {
	t.Helper()
	r := osb(t, bin, env, append([]string{"server", "--listen", "127.0.0.1:0"}, args...)...)
	if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "Error: ") || !strings.Contains(r.stderr, want) {
		t.Errorf("osb server %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", args, r.code, r.stdout, r.stderr, want)
	}
	if strings.Contains(r.stderr, "listening") {
		t.Errorf("osb server %v started: %q", args, r.stderr)
	}
}

func TestServerKeyNeverOnTheCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin := buildOsb(t)
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	refused(t, bin, env, "--api-key would show the key to every local user", "--api-key", "argv-key")

	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte("file-key\n"), 0o644)
	refused(t, bin, env, "--api-key-file "+open+" has mode 0644; other users may read it: chmod 600 "+open, "--api-key-file", open)
	os.Chmod(open, 0o640)
	refused(t, bin, env, "has mode 0640", "--api-key-file", open)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	refused(t, bin, env, "must hold the key on one line", "--api-key-file", empty)
	refused(t, bin, env, "--api-key-file: open "+filepath.Join(dir, "missing"), "--api-key-file", filepath.Join(dir, "missing"))
	refused(t, bin, env, "is not a regular file", "--api-key-file", dir)

	// A 0600 file: the key works, and appears neither in argv nor in the output.
	keyFile := filepath.Join(dir, "key")
	os.WriteFile(keyFile, []byte("file-key\n"), 0o600)
	srv := launchServer(t, bin, home, "", "--api-key-file", keyFile)
	if srv.key != "" {
		t.Errorf("a key was generated although the file gave one: %q", srv.key)
	}
	osb(t, bin, clientEnv(home, srv.addr, "file-key"), "sandbox", "list").expect(t, 0)
	osb(t, bin, clientEnv(home, srv.addr, "other"), "sandbox", "list").expect(t, 3)
	if argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", srv.cmd.Process.Pid)); bytes.Contains(argv, []byte("file-key")) {
		t.Errorf("the key is on the command line: %q", argv)
	}
	srv.stop(os.Interrupt)
	if strings.Contains(srv.logs.String(), "file-key") {
		t.Errorf("the key is in the server's output:\n%s", srv.logs.String())
	}

	// The environment, as clients read it too.
	envSrv := launchServer(t, bin, home, "env-key")
	osb(t, bin, clientEnv(home, envSrv.addr, "env-key"), "sandbox", "list").expect(t, 0)
	if argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", envSrv.cmd.Process.Pid)); bytes.Contains(argv, []byte("env-key")) {
		t.Errorf("the key is on the command line: %q", argv)
	}
}

func TestServerReadyFD(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin := buildOsb(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(bin, "server", "--listen", "127.0.0.1:0", "--ready-fd", "3")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "OPEN_SANDBOX_API_KEY=ready-key"}
	cmd.ExtraFiles = []*os.File{w} // fd 3
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// One line, then end of file: the server closed its end.
	all, err := io.ReadAll(bufio.NewReader(r))
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSuffix(string(all), "\n")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || strings.Contains(url, "\n") || !strings.HasSuffix(string(all), "\n") {
		t.Fatalf("ready fd said %q", all)
	}
	// Ready means ready: the first request is answered.
	resp, err := http.Get(url + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health right after ready: %v", err)
	}
	resp.Body.Close()
	cmd.Process.Signal(os.Interrupt)
	waitStopped(t, cmd)
	if !strings.Contains(stderr.String(), "osb server listening on "+url+"\n") {
		t.Errorf("no ready line on stderr: %q", stderr.String())
	}

	env := []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "OPEN_SANDBOX_API_KEY=k"}
	refused(t, bin, env, "--ready-fd 9 is not an open file descriptor", "--ready-fd", "9")
	refused(t, bin, env, "--ready-fd must be a file descriptor number, got -1", "--ready-fd", "-1")
}

func TestServerNoAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped under -short")
	}
	bin := buildOsb(t)
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:0", "example.com:0"} {
		r := osb(t, bin, env, "server", "--no-auth", "--listen", addr)
		if r.code != 2 || r.stderr != "Error: --no-auth listens on loopback addresses only (127.0.0.1, ::1, localhost), not \""+addr+"\"\n" {
			t.Errorf("--no-auth --listen %s: exit %d, %q", addr, r.code, r.stderr)
		}
	}
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("k\n"), 0o600)
	refused(t, bin, env, "--no-auth and --api-key-file cannot be combined", "--no-auth", "--api-key-file", keyFile)

	help := osb(t, bin, env, "server", "--help").expect(t, 0)
	if !strings.Contains(help.stdout, "--no-auth") || !strings.Contains(help.stdout, "loopback") {
		t.Errorf("osb server --help does not document --no-auth:\n%s", help.stdout)
	}

	// A key in the environment is ignored: --no-auth is explicit.
	srv := launchServer(t, bin, home, "ignored-key", "--no-auth")
	id := createSandbox(t, bin, clientEnv(home, srv.addr, ""))
	osb(t, bin, clientEnv(home, srv.addr, ""), "command", "run", id, "--", "true").expect(t, 0)
	// The data plane needs no credential either, and endpoints carry none,
	// as the real server's Docker runtime hands them out.
	out := osb(t, bin, clientEnv(home, srv.addr, ""), "sandbox", "endpoint", id, "-p", "44772", "-o", "json").expect(t, 0)
	var ep struct {
		Endpoint string
		Headers  map[string]string
	}
	if err := json.Unmarshal([]byte(out.stdout), &ep); err != nil || len(ep.Headers) != 0 {
		t.Errorf("endpoint under --no-auth: %s (%v)", out.stdout, err)
	}
	client := http.Client{Timeout: time.Minute}
	resp, err := client.Get("http://" + srv.addr + "/sandboxes/" + id + "/proxy/44772/ping")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("data plane without a credential under --no-auth: %d", resp.StatusCode)
	}
	if err := srv.stop(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(srv.logs.String(), "WARNING: --no-auth: any local user can use this server and its sandboxes.\n") {
		t.Errorf("no warning: %s", srv.logs.String())
	}
}
