package e2e

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A copy of a tree killed part way (SIGKILL: nothing of osb runs after it)
// leaves no part of the tree at its target, only a hidden staging
// directory; the next copy into the same directory removes it.
func TestKilledTreeCopyLeavesNoPartOfTheTree(t *testing.T) {
	t.Parallel()
	bin, env := startServer(t)
	id := strings.TrimSpace(osb(t, bin, env, "sandbox", "create", "-i", "python:3.11", "-q", "id").expect(t, 0, "sandbox create").stdout)
	osb(t, bin, env, "command", "run", id, "--", "sh", "-c",
		"mkdir /workspace/tree && cd /workspace/tree && for i in $(seq 300); do head -c 4096 /dev/urandom >f$i; done").expect(t, 0, "command run")

	// Through a proxy that stops passing the server's answers on after
	// 300 KiB: the tar stream (about 1.3 MiB) stalls part way.
	proxy := holdingProxy(t, serverAddr(env), 300<<10)
	dest := t.TempDir()
	target := filepath.Join(dest, "copy")
	cp := command(t, bin, "cp", id+":/workspace/tree", target)
	cp.Env = withEnv(env, "OPEN_SANDBOX_DOMAIN", proxy)
	if err := cp.Start(); err != nil {
		t.Fatal(err)
	}
	staged := waitForStagedFile(t, dest, target)
	cp.Process.Kill()
	cp.Wait()
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("%s exists after the copy was killed (%v)", target, err)
	}
	if entries, _ := os.ReadDir(dest); len(entries) != 1 || entries[0].Name() != staged {
		t.Errorf("%s holds %v, want only the staging directory %s", dest, entries, staged)
	}

	again := filepath.Join(dest, "again")
	osb(t, bin, env, "cp", id+":/workspace/tree", again).expect(t, 0, "cp")
	entries, _ := os.ReadDir(dest)
	if len(entries) != 1 || entries[0].Name() != "again" {
		t.Errorf("%s holds %v after the next copy, want only again", dest, entries)
	}
	if files, _ := os.ReadDir(again); len(files) != 300 {
		t.Errorf("the next copy holds %d files, want 300", len(files))
	}
}

// waitForStagedFile waits until a hidden staging directory in dir holds a
// file of the tree being copied to target, and returns its name. The test
// fails at once when target appears first.
func waitForStagedFile(t *testing.T, dir, target string) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Lstat(target); err == nil {
			t.Fatalf("%s appeared while the copy was still running", target)
		}
		stages, _ := filepath.Glob(filepath.Join(dir, ".osb-download-*"))
		for _, s := range stages {
			if files, _ := os.ReadDir(filepath.Join(s, "tree")); len(files) > 0 {
				return filepath.Base(s)
			}
		}
	}
	t.Fatalf("no staged file appeared in %s within a minute", dir)
	return ""
}

// holdingProxy forwards loopback connections to addr, but passes on only
// the first limit bytes of what comes back, over all its connections,
// and then holds the rest; it returns its address.
func holdingProxy(t *testing.T, addr string, limit int64) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	left := limit
	take := func(n int) int {
		mu.Lock()
		defer mu.Unlock()
		n = int(min(int64(n), left))
		left -= int64(n)
		return n
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			t.Cleanup(func() { c.Close(); s.Close() })
			go io.Copy(s, c)
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := s.Read(buf)
					if m := take(n); m > 0 {
						c.Write(buf[:m])
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// serverAddr is the address env points osb at.
func serverAddr(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OPEN_SANDBOX_DOMAIN="); ok {
			return v
		}
	}
	return ""
}

// withEnv is env with key set to value.
func withEnv(env []string, key, value string) []string {
	out := []string{key + "=" + value}
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}
