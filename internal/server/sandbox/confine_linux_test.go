package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The init moves any process of the sandbox into the capped cgroup on
// execd's request, but never itself or execd, by any of their thread ids
// (a thread's id in cgroup.procs moves its whole process).
func TestConfineRefusesTheInitAndExecd(t *testing.T) {
	dir := t.TempDir()
	open := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	confiner = &reserveCgroups{procs: open("procs"), agents: open("agent")}
	t.Cleanup(func() { confiner = nil; agentPID.Store(0) })
	// This process stands for execd.
	agentPID.Store(int64(os.Getpid()))
	threads, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	refused := []int{1}
	for _, e := range threads {
		tid, _ := strconv.Atoi(e.Name())
		refused = append(refused, tid)
	}
	for _, pid := range refused {
		if err := confinePID(pid); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("confinePID(%d): %v, want a refusal", pid, err)
		}
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	if err := confinePID(child.Process.Pid); err != nil {
		t.Fatalf("confinePID(a command): %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "procs")); string(b) != strconv.Itoa(child.Process.Pid) {
		t.Errorf("written to procs/cgroup.procs: %q, want only the command's pid", b)
	}
}
