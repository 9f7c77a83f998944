package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// clockTicks is USER_HZ, which Linux fixes at 100 for /proc/PID/stat.
	clockTicks = 100
)

// procStat is the part of /proc/PID/stat we use.
type procStat struct {
	state    byte
	ppid     int
	cpuTicks uint64 // utime + stime
	rssPages uint64
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name may contain spaces and parentheses: parse after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return procStat{}, errors.New("short stat")
	}
	num := func(k int) uint64 { n, _ := strconv.ParseUint(f[k], 10, 64); return n }
	return procStat{
		state:    f[0][0],
		ppid:     int(num(1)),
		cpuTicks: num(11) + num(12),
		rssPages: num(21),
	}, nil
}

func listPIDs() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// marker is the environment entry that identifies an unisolated sandbox's
// processes where it has no cgroup; children inherit it, so daemons that
// left the process group are still found, but not those that dropped it.
func (s *Sandbox) marker() string { return markerKey + s.id }

const markerKey = "OPENSANDBOX_ID="

// scanOwners maps sandboxes without a cgroup to their live (non-zombie)
// host pids in one pass over /proc: isolated, every process of the sandbox
// pid namespace; otherwise every process carrying the sandbox marker. One pass serves many
// sandboxes, which keeps closing hundreds of sandboxes linear.
func scanOwners(sbs []*Sandbox) map[*Sandbox][]int {
	byNS := map[string]*Sandbox{}
	byID := map[string]*Sandbox{}
	for _, sb := range sbs {
		switch a := sb.anchor.Load(); {
		case a == nil:
		case a.isolated && !a.alive():
			// Its pid namespace ended with its init: nothing is left, and
			// once Remove has let go of the namespace its number may be
			// another's (see anchor.pidNSFile).
		case a.isolated:
			byNS[a.pidNS] = sb
		default:
			byID[sb.id] = sb
		}
	}
	out := map[*Sandbox][]int{}
	if len(byNS)+len(byID) == 0 {
		return out
	}
	for _, pid := range listPIDs() {
		sb := ownerOf(pid, byNS, byID)
		if sb == nil {
			continue
		}
		if st, err := readStat(pid); err == nil && st.state != 'Z' {
			out[sb] = append(out[sb], pid)
		}
	}
	return out
}

func ownerOf(pid int, byNS, byID map[string]*Sandbox) *Sandbox {
	if len(byNS) > 0 {
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err == nil && byNS[ns] != nil {
			return byNS[ns]
		}
	}
	if len(byID) == 0 {
		return nil
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return nil
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if id, ok := bytes.CutPrefix(kv, []byte(markerKey)); ok {
			return byID[string(id)]
		}
	}
	return nil
}

// members is the sandbox's live processes; nil before Start.
func (s *Sandbox) members() []int {
	if s.inside {
		return insideMembers()
	}
	return owners([]*Sandbox{s})[s]
}

// owners maps sandboxes to their live host pids: from a sandbox's cgroup
// where it has one (exact, and no cost from the rest of the host), else
// from one shared pass over /proc.
func owners(sbs []*Sandbox) map[*Sandbox][]int {
	out := map[*Sandbox][]int{}
	var rest []*Sandbox
	for _, sb := range sbs {
		if sb.anchor.Load() == nil {
			continue
		}
		// The agent's own view of its cgroup (inside) is for metrics only.
		if pids, ok := sb.cg.members(); ok && !sb.inside {
			if len(pids) > 0 {
				out[sb] = pids
			}
			continue
		}
		rest = append(rest, sb)
	}
	for sb, pids := range scanOwners(rest) {
		out[sb] = pids
	}
	return out
}

func signalAll(pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		kill(pid, sig)
	}
}

// PIDs returns the host pids of the sandbox's live processes, sorted.
func (s *Sandbox) PIDs() []int {
	p := s.members()
	slices.Sort(p)
	return p
}

// Usage is a point-in-time resource reading of a sandbox's processes.
type Usage struct {
	At         time.Time
	CPUSeconds float64 // user+system CPU time consumed so far by the live processes
	RSSBytes   uint64  // resident memory of the live processes (with a cgroup: the memory it charges)
	LimitBytes uint64  // the sandbox's memory limit; 0 when it has none
	Processes  int
}

// Usage sums CPU time and resident memory over the sandbox's processes.
// CPU use between two readings is (b.CPUSeconds-a.CPUSeconds)/b.At.Sub(a.At).
func (s *Sandbox) Usage() Usage {
	u := Usage{At: time.Now()}
	if s.cg != nil {
		// The cgroup counts what /proc cannot: page cache, and processes
		// that came and went between two readings.
		if cpu, mem, ok := s.cg.usage(); ok {
			u.CPUSeconds, u.RSSBytes, u.Processes = cpu, mem, len(s.members())
			u.LimitBytes = s.cg.memoryLimit()
			return u
		}
	}
	page := uint64(os.Getpagesize())
	for _, pid := range s.PIDs() {
		st, err := readStat(pid)
		if err != nil {
			continue
		}
		u.CPUSeconds += float64(st.cpuTicks) / clockTicks
		u.RSSBytes += st.rssPages * page
		u.Processes++
	}
	return u
}

// MemTotalBytes is MemTotal from /proc/meminfo, read once: it does not
// change while the server runs, and metrics streams ask for it every tick.
var MemTotalBytes = sync.OnceValues(readMemTotal)

func readMemTotal() (uint64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("MemTotal not in /proc/meminfo")
}

// KillAll kills many sandboxes at once, sharing the /proc scans (see Kill).
func KillAll(sbs []*Sandbox) error {
	var mine []*Sandbox
	for _, sb := range sbs {
		sb.killOnce.Do(func() {
			sb.mu.Lock() // Start holds mu: it either finished or will see done
			close(sb.done)
			sb.mu.Unlock()
			mine = append(mine, sb)
		})
	}
	if len(mine) > 0 {
		killGroup(mine, killGrace)
	}
	var errs []error
	for _, sb := range sbs {
		<-sb.killed // killed by us or by a concurrent caller
		errs = append(errs, sb.killErr)
	}
	return errors.Join(errs...)
}

// killGroup ends every process of the sandboxes: SIGTERM (plus SIGCONT, so
// stopped processes can act on it), up to grace for them to exit, then
// SIGKILL until none is left. Killing an isolated init makes the kernel kill
// the rest of its namespace.
func killGroup(sbs []*Sandbox, grace time.Duration) {
	live := owners(sbs)
	var termed []int
	for sb, pids := range live {
		signalAll(pids, syscall.SIGTERM)
		signalAll(pids, sigCont)
		termed = append(termed, sb.anchor.Load().withoutInit(pids)...)
	}
	// Wait only for the processes that got SIGTERM: an init's reaping loop
	// keeps spawning short sleeps.
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && anyAlive(termed) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, sb := range sbs {
		if a := sb.anchor.Load(); a != nil && a.alive() {
			kill(-a.cmd.Process.Pid, syscall.SIGKILL)
			kill(a.initPID, syscall.SIGKILL)
		}
	}
	for deadline := time.Now().Add(killWait); ; {
		if live = owners(sbs); len(live) == 0 || time.Now().After(deadline) {
			break
		}
		for _, pids := range live {
			signalAll(pids, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
	timeout := time.After(5 * time.Second)
	for _, sb := range sbs {
		sb.killErr = sb.awaitAnchor(timeout, live[sb])
		close(sb.killed)
	}
}

// killWait bounds the SIGKILL rounds of killGroup, in time rather than in
// rounds. A process dies of SIGKILL once the kernel runs it again: on a
// machine under load a sandbox's last process outlived the 500 rounds of
// 5 ms that were the bound, and its delete failed though it was dying.
const killWait = 10 * time.Second

func (s *Sandbox) awaitAnchor(timeout <-chan time.Time, survivors []int) error {
	if a := s.anchor.Load(); a != nil {
		select {
		case <-a.exited:
		case <-timeout:
			return fmt.Errorf("sandbox %s: anchor process did not exit", s.id)
		}
	}
	if len(survivors) > 0 {
		return fmt.Errorf("sandbox %s: processes survived SIGKILL: %v", s.id, survivors)
	}
	return nil
}

func allStopped(pids []int) bool {
	for _, p := range pids {
		if st, err := readStat(p); err == nil && st.state != 'T' && st.state != 't' && st.state != 'Z' {
			return false
		}
	}
	return true
}

func anyAlive(pids []int) bool {
	for _, p := range pids {
		if st, err := readStat(p); err == nil && st.state != 'Z' {
			return true
		}
	}
	return false
}

// withoutInit drops the isolated init, which ignores SIGTERM by design.
func (a *anchor) withoutInit(pids []int) []int {
	if a == nil || !a.isolated {
		return pids
	}
	out := pids[:0:0]
	for _, p := range pids {
		if p != a.initPID {
			out = append(out, p)
		}
	}
	return out
}

// alive reports whether the anchor has not been reaped yet. Once it has, its
// pid (and group id) may already belong to a process of someone else, such
// as another sandbox's init: it must not be signalled any more.
func (a *anchor) alive() bool {
	select {
	case <-a.exited:
		return false
	default:
		return true
	}
}
