package sandbox

import (
	"math"
	"os"
	"strconv"
	"strings"
)

// pidsReserve is what the init and agent (Go programs: a thread or so per
// CPU, more for blocking calls) may use beyond the sandbox's own cap.
const pidsReserve = 256

// fileShare is the part of the host's file-max (the open files of the whole
// system) that one sandbox may hold: 1/fileShare. The processes a sandbox
// may have (its pids cap, plus the init's and agent's reserve) each get an
// RLIMIT_NOFILE of that share divided among them, which root in the
// sandbox cannot raise (that takes CAP_SYS_RESOURCE on the host).
const fileShare = 4

// minNoFile is the least RLIMIT_NOFILE a sandbox's process gets, whatever
// its share: below it, ordinary programs fail. So that the share still
// holds, an isolated sandbox's pids cap is lowered to FileBound.MaxPIDs.
const minNoFile = 1024

// minPIDs is the least pids cap FileBound.MaxPIDs gives, on a host whose
// file-max is too small for more (below fileShare*minNoFile*(minPIDs+
// pidsReserve), 1,310,720): a sandbox there may hold more than its share.
const minPIDs = 64

// FileBound is how the host's file-max bounds an isolated sandbox.
type FileBound struct {
	FileMax uint64 // /proc/sys/fs/file-max; 0 when unknown (then no bound)
	Share   uint64 // the open files one sandbox may hold: FileMax/fileShare
	// MaxPIDs is the largest pids cap whose processes, with the init's and
	// execd's reserve, each at minNoFile open files, fit in Share.
	MaxPIDs int64
}

// OpenFiles is the bound the host's file-max sets now.
func OpenFiles() FileBound { return fileBound(fileMax()) }

func fileBound(fileMax uint64) FileBound {
	if fileMax == 0 {
		return FileBound{}
	}
	b := FileBound{FileMax: fileMax, Share: fileMax / fileShare}
	b.MaxPIDs = minPIDs
	if n := b.Share / minNoFile; n > minPIDs+pidsReserve {
		b.MaxPIDs = int64(min(n-pidsReserve, math.MaxInt64))
	}
	return b
}

// Holds says whether the bound keeps every sandbox within its share
// (false on a host whose file-max is too small: see minPIDs).
func (b FileBound) Holds() bool {
	return b.FileMax == 0 || uint64(b.MaxPIDs+pidsReserve)*minNoFile <= b.Share
}

// Reserve is the processes the init and execd may have beyond the cap.
func (b FileBound) Reserve() int64 { return pidsReserve }

// MinNoFile is the open files each process gets at the least.
func (b FileBound) MinNoFile() uint64 { return minNoFile }

// Fit lowers l's pids cap to MaxPIDs, and says from what (0: not lowered).
func (b FileBound) Fit(l *Limits) (was int64) {
	if b.FileMax == 0 || l.PIDs <= b.MaxPIDs {
		return 0
	}
	was, l.PIDs = l.PIDs, b.MaxPIDs
	return was
}

// noFileLimit is the RLIMIT_NOFILE of a sandbox's processes given its pids
// cap, the host's file-max and the server's own hard limit (never raised):
// 0 when there is nothing to lower.
func noFileLimit(pids int64, fileMax, ownHard uint64) uint64 {
	if pids <= 0 || fileMax == 0 {
		return 0
	}
	n := max(fileMax/fileShare/uint64(pids+pidsReserve), minNoFile)
	if n >= ownHard {
		return 0
	}
	return n
}

// fileMax is the host's /proc/sys/fs/file-max, 0 when unknown.
func fileMax() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/file-max")
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}
