package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Cgroups. Each sandbox gets a cgroup (per controller on cgroup v1, one
// on v2) under the server's own cgroup: <own>/osb/<server pid>/<sandbox
// id>. Its first process is in it before it starts anything, so every
// process of the sandbox is counted and limited (an unisolated sandbox's
// only counted: its cgroup has no limits).
// The server pid level lets a server find what servers that were killed
// left behind (their pid is gone) and remove it.

// CgroupSupport tells whether sandboxes can get resource limits here.
type CgroupSupport struct {
	Available bool
	Version   int               // 1 or 2
	Reason    string            // why not, when unavailable
	parents   map[string]string // controller ("" on v2) → its "osb" directory
}

var cgroupsOnce = sync.OnceValue(probeCgroups)

// Cgroups reports, once per process, what cgroups offer sandboxes here.
func Cgroups() CgroupSupport { return cgroupsOnce() }

// v1Controllers are the cgroup v1 hierarchies used; cpuacct only for
// readings, where mounted apart from cpu.
var v1Controllers = []string{"memory", "cpu", "pids"}

func probeCgroups() CgroupSupport {
	mounts, v2mount := cgroupMounts()
	own := ownCgroups()
	if rootless {
		return probeDelegated(v2mount, own[""])
	}
	if len(mounts) > 0 {
		parents := map[string]string{}
		for _, c := range append(v1Controllers, "cpuacct") {
			mp, ok := mounts[c]
			if !ok {
				if c == "cpuacct" {
					continue
				}
				return CgroupSupport{Reason: "cgroup v1 controller " + c + " is not mounted"}
			}
			dir := filepath.Join(mp, own[c], "osb")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return CgroupSupport{Reason: "cannot create cgroups: " + err.Error()}
			}
			removeStaleCgroups(dir)
			parents[c] = dir
		}
		return CgroupSupport{Available: true, Version: 1, parents: parents}
	}
	if v2mount == "" {
		return CgroupSupport{Reason: "no cgroup filesystem is mounted"}
	}
	return probeV2(v2mount, own[""])
}

// probeDelegated is a rootless server's probe: only a cgroup v2 subtree
// delegated to its user (e.g. systemd's Delegate=yes) can be used.
func probeDelegated(mount, own string) CgroupSupport {
	const why = "osb server is not running as root and has no delegated cgroup v2 subtree"
	if mount == "" {
		return CgroupSupport{Reason: why + " (no cgroup v2 mounted)"}
	}
	if unix.Access(filepath.Join(mount, own, "cgroup.subtree_control"), unix.W_OK) != nil {
		return CgroupSupport{Reason: why + " (" + filepath.Join(mount, own) + " is not writable)"}
	}
	cg := probeV2(mount, own)
	if !cg.Available {
		cg.Reason = why + " (" + cg.Reason + ")"
	}
	return cg
}

// probeV2 prepares <own>/osb with the memory, cpu and pids controllers.
// A cgroup with processes cannot hand controllers down, so when the
// server's own cgroup has any, the server moves into <own>/osb-server.
func probeV2(mount, own string) CgroupSupport {
	base := filepath.Join(mount, own)
	want := "+memory +cpu +pids"
	if err := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte(want), 0); err != nil {
		leaf := filepath.Join(base, "osb-server")
		if err := os.MkdirAll(leaf, 0o755); err != nil {
			return CgroupSupport{Reason: "cannot create cgroups: " + err.Error()}
		}
		if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			return CgroupSupport{Reason: "cannot move the server into a leaf cgroup: " + err.Error()}
		}
		if err := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte(want), 0); err != nil {
			return CgroupSupport{Reason: "cannot enable cgroup controllers: " + err.Error()}
		}
	}
	dir := filepath.Join(base, "osb")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return CgroupSupport{Reason: "cannot create cgroups: " + err.Error()}
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(want), 0); err != nil {
		return CgroupSupport{Reason: "cannot enable cgroup controllers: " + err.Error()}
	}
	removeStaleCgroups(dir)
	return CgroupSupport{Available: true, Version: 2, parents: map[string]string{"": dir}}
}

// cgroupMounts finds the v1 hierarchies by controller, and a v2 mount.
func cgroupMounts() (v1 map[string]string, v2 string) {
	v1 = map[string]string{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return v1, ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		fields, after := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(after) < 3 {
			continue
		}
		switch after[0] {
		case "cgroup2":
			if v2 == "" {
				v2 = unescapeMount(fields[4])
			}
		case "cgroup":
			for _, opt := range strings.Split(after[2], ",") {
				if _, seen := v1[opt]; !seen {
					v1[opt] = unescapeMount(fields[4])
				}
			}
		}
	}
	for k := range v1 {
		if k != "memory" && k != "cpu" && k != "pids" && k != "cpuacct" {
			delete(v1, k)
		}
	}
	if _, ok := v1["memory"]; !ok {
		// A hybrid host's v1 hierarchies without memory are of no use.
		clear(v1)
	}
	return v1, v2
}

// ownCgroups maps controller ("" for v2) to this process's cgroup path.
func ownCgroups() map[string]string {
	out := map[string]string{}
	b, _ := os.ReadFile("/proc/self/cgroup")
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// cgroup is one sandbox's cgroup: a directory per hierarchy. The process
// cap has two levels: the sandbox's own processes join the child "procs"
// (capped at the sandbox's pids limit) as they start, moved there by the
// init (confine_linux.go); the init and agent stay in "agent", so a fork bomb that fills "procs" leaves
// them the reserve they need to go on serving.
type cgroup struct {
	version int
	dirs    map[string]string // controller ("" on v2) → directory
	pidsDir string            // the directory with the agent/ and procs/ children
}

// newCgroup creates the sandbox's cgroup with its limits.
func newCgroup(id string, l Limits) (*cgroup, error) {
	cs := Cgroups()
	if !cs.Available {
		return nil, errors.New(cs.Reason)
	}
	cg := &cgroup{version: cs.Version, dirs: map[string]string{}}
	for c, parent := range cs.parents {
		dir := filepath.Join(parent, strconv.Itoa(os.Getpid()), id)
		if err := makeCgroupDir(dir, cs.Version); err != nil {
			cg.remove()
			return nil, err
		}
		cg.dirs[c] = dir
	}
	if err := cg.limit(l); err != nil {
		cg.remove()
		return nil, err
	}
	return cg, nil
}

// limit sets the cgroup's limits, and splits pids into agent/ and procs/
// where the sandbox's processes count.
func (cg *cgroup) limit(l Limits) error {
	if err := cg.setLimits(l); err != nil {
		return err
	}
	return cg.splitPIDs(l.PIDs)
}

// splitPIDs makes the agent/ and procs/ children of the pids hierarchy.
func (cg *cgroup) splitPIDs(limit int64) error {
	if limit <= 0 {
		// No children: on v2 a cgroup that hands controllers down cannot
		// hold the init itself.
		return nil
	}
	ctl := "pids"
	if cg.version == 2 {
		ctl = ""
		if err := os.WriteFile(filepath.Join(cg.dirs[ctl], "cgroup.subtree_control"), []byte("+pids"), 0); err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
	}
	dir, ok := cg.dirs[ctl]
	if !ok {
		return nil
	}
	cg.pidsDir = dir
	for _, sub := range []string{"agent", "procs"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	writes := [][2]string{
		{"pids.max", strconv.FormatInt(limit+pidsReserve, 10)},
		{"procs/pids.max", strconv.FormatInt(limit, 10)},
	}
	for _, w := range writes {
		if err := os.WriteFile(filepath.Join(dir, w[0]), []byte(w[1]), 0); err != nil {
			return fmt.Errorf("cgroup %s: %w", w[0], err)
		}
	}
	return nil
}

// reserveFiles opens, for the init, the cgroup.procs of procs/ and of
// agent/ (nil without the split): writes to them move processes with the
// server's rights, and nothing of the sandbox can write them otherwise
// (confine_linux.go).
func (cg *cgroup) reserveFiles() (procs, reserve *os.File, err error) {
	if cg.pidsDir == "" {
		return nil, nil, nil
	}
	procs, err = os.OpenFile(filepath.Join(cg.pidsDir, "procs", "cgroup.procs"), os.O_WRONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	reserve, err = os.OpenFile(filepath.Join(cg.pidsDir, "agent", "cgroup.procs"), os.O_WRONLY, 0)
	if err != nil {
		procs.Close()
		return nil, nil, err
	}
	return procs, reserve, nil
}

func (cg *cgroup) setLimits(l Limits) error {
	var w []error
	set := func(c, file, value string) {
		if dir, ok := cg.dirs[c]; ok {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
				w = append(w, fmt.Errorf("cgroup %s: %w", file, err))
			}
		}
	}
	period := 100000
	if cg.version == 2 {
		if l.Memory > 0 {
			set("", "memory.max", strconv.FormatInt(l.Memory, 10))
			set("", "memory.swap.max", "0")
		}
		if l.CPUs > 0 {
			set("", "cpu.max", fmt.Sprintf("%d %d", int(l.CPUs*float64(period)), period))
		}
		if l.PIDs > 0 {
			set("", "pids.max", strconv.FormatInt(l.PIDs, 10))
		}
		return errors.Join(w...)
	}
	if l.Memory > 0 {
		// memsw (memory and swap) may never be below the memory limit: a
		// limit raised (a spare's default replaced) moves memsw first.
		files := []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"}
		if _, err := os.Stat(filepath.Join(cg.dirs["memory"], files[1])); err != nil {
			files = files[:1]
		} else if cur := cg.memoryLimit(); cur != 0 && uint64(l.Memory) > cur {
			files[0], files[1] = files[1], files[0]
		}
		for _, f := range files {
			set("memory", f, strconv.FormatInt(l.Memory, 10))
		}
	}
	if l.CPUs > 0 {
		set("cpu", "cpu.cfs_period_us", strconv.Itoa(period))
		set("cpu", "cpu.cfs_quota_us", strconv.Itoa(max(1000, int(l.CPUs*float64(period)))))
	}
	if l.PIDs > 0 {
		set("pids", "pids.max", strconv.FormatInt(l.PIDs, 10))
	}
	return errors.Join(w...)
}

// add moves a process (and so everything it will start) into the cgroup.
func (cg *cgroup) add(pid int) error {
	for _, dir := range cg.dirs {
		if dir == cg.pidsDir {
			dir = filepath.Join(dir, "agent")
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("joining cgroup: %w", err)
		}
	}
	return nil
}

// remove deletes the cgroup once its processes are gone (the kernel may
// take a moment to let go of the last ones).
func (cg *cgroup) remove() error {
	var errs []error
	for _, dir := range cg.dirs {
		for _, d := range []string{filepath.Join(dir, "agent"), filepath.Join(dir, "procs"), dir} {
			errs = append(errs, removeCgroupDir(d))
		}
	}
	return errors.Join(errs...)
}

func removeCgroupDir(dir string) error {
	var err error
	for range 100 {
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

// usage reads CPU seconds and memory in use; ok is false when unreadable.
func (cg *cgroup) usage() (cpuSeconds float64, memBytes uint64, ok bool) {
	read := func(c, file string) (string, bool) {
		dir, found := cg.dirs[c]
		if !found {
			return "", false
		}
		b, err := os.ReadFile(filepath.Join(dir, file))
		return strings.TrimSpace(string(b)), err == nil
	}
	if cg.version == 2 {
		mem, ok1 := read("", "memory.current")
		stat, ok2 := read("", "cpu.stat")
		if !ok1 || !ok2 {
			return 0, 0, false
		}
		m, _ := strconv.ParseUint(mem, 10, 64)
		for _, line := range strings.Split(stat, "\n") {
			if v, found := strings.CutPrefix(line, "usage_usec "); found {
				us, _ := strconv.ParseFloat(v, 64)
				cpuSeconds = us / 1e6
			}
		}
		return cpuSeconds, m, true
	}
	mem, ok1 := read("memory", "memory.usage_in_bytes")
	cpu, ok2 := read("cpuacct", "cpuacct.usage")
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	m, _ := strconv.ParseUint(mem, 10, 64)
	ns, _ := strconv.ParseFloat(cpu, 64)
	return ns / 1e9, m, true
}

// makeCgroupDir creates a sandbox's cgroup and, when missing, its server
// level (which ReleaseCgroups may remove while no sandbox runs).
func makeCgroupDir(dir string, version int) error {
	var err error
	for range 3 {
		server := filepath.Dir(dir)
		if err = os.MkdirAll(server, 0o755); err != nil {
			return err
		}
		if version == 2 {
			os.WriteFile(filepath.Join(server, "cgroup.subtree_control"), []byte("+memory +cpu +pids"), 0)
		}
		if err = os.Mkdir(dir, 0o755); err == nil || errors.Is(err, os.ErrExist) {
			return nil
		}
	}
	return err
}

// ReleaseCgroups removes this server process's cgroup level once no
// sandbox of it remains (another server in the same process may still
// have some: then it stays).
func ReleaseCgroups() {
	cs := Cgroups()
	for _, parent := range cs.parents {
		os.Remove(filepath.Join(parent, strconv.Itoa(os.Getpid())))
	}
}

// removeStaleCgroups removes what servers that are gone left in the osb
// directory: their sandboxes' processes died with them, the cgroups stayed.
func removeStaleCgroups(osbDir string) {
	entries, _ := os.ReadDir(osbDir)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			continue // a live server's (or a reused pid: left for later)
		}
		removeCgroupTree(filepath.Join(osbDir, e.Name()))
	}
}

// removeCgroupTree removes a cgroup and those below it, deepest first;
// a cgroup that still has processes stays. One without is retried as a
// sandbox's own are: the kernel can refuse (EBUSY) a cgroup whose last
// process or child is still being released, which on a loaded machine
// outlasts a server's start.
func removeCgroupTree(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			removeCgroupTree(filepath.Join(dir, e.Name()))
		}
	}
	if procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil && len(procs) == 0 {
		removeCgroupDir(dir)
		return
	}
	os.Remove(dir)
}

// memoryLimit is the cgroup's memory limit in bytes; 0 for none.
func (cg *cgroup) memoryLimit() uint64 {
	dir, file := cg.dirs["memory"], "memory.limit_in_bytes"
	if cg.version == 2 {
		dir, file = cg.dirs[""], "memory.max"
	}
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n >= 1<<60 { // "max", or v1's page-rounded "unlimited"
		return 0
	}
	return n
}

// metricsMounts are the sandbox cgroup directories shown (read-only) to
// the agent inside, for its metrics, by name under metricsDir.
func (cg *cgroup) metricsMounts() map[string]string {
	out := map[string]string{}
	for c, dir := range cg.dirs {
		switch c {
		case "memory", "cpuacct":
			out[c] = dir
		case "":
			out["unified"] = dir
		}
	}
	return out
}

// insideCgroup is the sandbox's cgroup as the agent sees it (see
// metricsMounts); nil when not shown.
func insideCgroup() *cgroup {
	if _, err := os.Stat(filepath.Join(metricsDir, "unified")); err == nil {
		return &cgroup{version: 2, dirs: map[string]string{"": filepath.Join(metricsDir, "unified")}}
	}
	cg := &cgroup{version: 1, dirs: map[string]string{}}
	for _, c := range []string{"memory", "cpuacct"} {
		if _, err := os.Stat(filepath.Join(metricsDir, c)); err != nil {
			return nil
		}
		cg.dirs[c] = filepath.Join(metricsDir, c)
	}
	return cg
}

// members lists the live processes of the cgroup and of the cgroups below
// it (the pids hierarchy's agent/ and procs/): every process of the sandbox
// and no other, as the kernel keeps them, without looking at the rest of
// the host. ok is false when the cgroup cannot be read.
func (cg *cgroup) members() (pids []int, ok bool) {
	if cg == nil {
		return nil, false
	}
	dir := cg.dirs["memory"] // always present on v1, and has no children
	if cg.version == 2 {
		dir = cg.dirs[""]
	}
	if dir == "" {
		return nil, false
	}
	pids, err := readProcsTree(dir, nil)
	if err != nil {
		return nil, false
	}
	live := pids[:0]
	for _, pid := range pids {
		if st, err := readStat(pid); err == nil && st.state != 'Z' {
			live = append(live, pid)
		}
	}
	return live, true
}

// readProcsTree appends the pids in dir's cgroup.procs and its children's.
func readProcsTree(dir string, pids []int) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return pids, err
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			if pids, err = readProcsTree(filepath.Join(dir, e.Name()), pids); err != nil {
				return pids, err
			}
		}
	}
	return pids, nil
}

// joinFiles are the cgroup.procs files a process started from the host
// writes its pid to, to become one of the sandbox's processes (in the
// pids hierarchy: procs/, under the sandbox's own cap).
func (cg *cgroup) joinFiles() []string {
	if cg == nil {
		return nil
	}
	var out []string
	for _, dir := range cg.dirs {
		if dir == cg.pidsDir {
			dir = filepath.Join(dir, "procs")
		}
		out = append(out, filepath.Join(dir, "cgroup.procs"))
	}
	return out
}
