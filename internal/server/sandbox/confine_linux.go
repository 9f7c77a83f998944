package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Confining the sandbox's processes. The pids cgroup of a sandbox with
// limits has two children (cgroup_linux.go): agent/, where the init and
// execd keep a reserve, and procs/, capped, where everything else runs.
// The sandbox's root must not be able to move the init or execd into
// procs/ (a fork bomb there would then starve them), so no cgroup file is
// writable or visible to it. The server opens both children's cgroup.procs
// and hands them to the init, which no process of the sandbox can reach
// (it lives in the user namespace outside theirs); the kernel checks a
// move against the credentials the file was opened with, the server's.
// The init moves the entrypoint itself, and any other process when execd
// asks (every command execd starts), refusing its own and execd's.

// confiner is the init's hold on the two cgroups; nil without limits.
var confiner *reserveCgroups

type reserveCgroups struct {
	mu     sync.Mutex
	procs  *os.File // procs/cgroup.procs
	agents *os.File // agent/cgroup.procs
}

// agentPID is execd's pid, as the init last started it.
var agentPID atomic.Int64

// confinePID moves pid into procs/ unless it is (a thread of) the init or
// execd. A refused or failed move is an error: the process must not run.
func confinePID(pid int) error {
	c := confiner
	if c == nil {
		return nil
	}
	if pid <= 0 {
		return errors.New("bad pid")
	}
	if tgid := threadGroup(pid); tgid == 1 || tgid == int(agentPID.Load()) {
		return fmt.Errorf("refused: %d is the init's or execd's", pid)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.procs.WriteString(strconv.Itoa(pid))
	// A pid can be reused between the check and the move (by one of
	// execd's new threads): whatever the move took of the reserve's goes
	// back.
	for _, p := range []int{1, int(agentPID.Load())} {
		if p > 0 && inProcsCgroup(p) {
			c.agents.WriteString(strconv.Itoa(p))
		}
	}
	return err
}

// threadGroup is the process a thread id belongs to (0 when gone): a
// thread's id in cgroup.procs moves its whole process.
func threadGroup(tid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// inProcsCgroup tells whether pid is in a procs/ cgroup (v1 pids or v2).
func inProcsCgroup(pid int) bool {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && (parts[1] == "pids" || parts[1] == "") && strings.HasSuffix(parts[2], "/procs") {
			return true
		}
	}
	return false
}

// serveConfine answers execd's requests on its end of a socket pair, one
// pid a message, "ok" or the error, until execd is gone.
func serveConfine(f *os.File) {
	defer f.Close()
	buf := make([]byte, 32)
	for {
		n, err := f.Read(buf)
		if err != nil || n == 0 {
			return
		}
		pid, err := strconv.Atoi(string(buf[:n]))
		if err == nil {
			err = confinePID(pid)
		}
		reply := "ok"
		if err != nil {
			reply = err.Error()
		}
		if _, err := f.WriteString(reply); err != nil {
			return
		}
	}
}

// openReserve is the init's side of the configuration: the descriptors of
// the two cgroups, when the server sent them.
func openReserve(cfg initConfig) {
	if cfg.ProcsFD > 0 && cfg.ReserveFD > 0 {
		confiner = &reserveCgroups{procs: os.NewFile(uintptr(cfg.ProcsFD), "procs"), agents: os.NewFile(uintptr(cfg.ReserveFD), "agent")}
	}
}
