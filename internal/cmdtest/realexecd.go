//go:build linux

package cmdtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/testnet"
)

// RealExecdSandbox is the sandbox id a RealExecd environment answers for:
// any id works, this one reads well in outputs.
const RealExecdSandbox = "real-execd"

// RealExecd starts upstream OpenSandbox's execd binary
// (../shared/peers/opensandbox/execd beside the repository) as a process on
// a loopback port, with an access token, and returns an environment whose
// lifecycle server is a small HTTP server of this package: it answers the
// endpoint route with execd's address and token header, as a real server
// does, and nothing else. Everything osb then does with the sandbox's
// execd reaches the real binary. The test is skipped, with one line saying
// why, when the binary is absent or the machine is not linux/amd64.
func RealExecd(t testing.TB) *Env {
	t.Helper()
	bin := realExecdBinary(t)
	port := testnet.FreePort(t)
	token := randomHex(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--access-token", token, "--graceful-shutdown-timeout", "100ms", "--log-level", "3")
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	logf, err := os.Create(filepath.Join(cmd.Dir, "execd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // its group: execd and the shells it started
		<-exited
		logf.Close()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waitListening(t, addr, exited)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/sandboxes/{id}/endpoints/{port}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"endpoint": addr, "headers": map[string]string{"X-EXECD-ACCESS-TOKEN": token}})
	})
	lifecycle := httptest.NewServer(mux)
	t.Cleanup(lifecycle.Close)
	e := Offline(t)
	e.Vars["OPEN_SANDBOX_DOMAIN"] = lifecycle.URL
	e.Vars["OPEN_SANDBOX_API_KEY"] = "test-key"
	e.CompletionBudget = time.Minute
	return e
}

func realExecdBinary(t testing.TB) string {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the real execd binary is built for linux/amd64 only")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Skip("the real execd: " + err.Error())
	}
	bin := filepath.Join(root, "..", "shared", "peers", "opensandbox", "execd")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("../shared/peers/opensandbox/execd is absent: no test against the real execd")
	}
	return bin
}

// moduleRoot is the directory holding go.mod, above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

func randomHex(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// waitListening waits until execd accepts connections, or fails the test
// when it exited or did not within a minute.
func waitListening(t testing.TB, addr string, exited <-chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatal("the real execd exited before listening")
		case <-ctx.Done():
			t.Fatalf("the real execd did not listen on %s within a minute", addr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
