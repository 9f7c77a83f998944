package sandbox

import (
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
// its share: below it, ordinary programs fail. A sandbox whose pids cap
// makes the share smaller than this (more than file-max/fileShare/minNoFile
// processes) may hold more than its share.
const minNoFile = 1024

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
