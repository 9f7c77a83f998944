package server

import (
	"fmt"
	"os"
	"strings"
)

// listensOn reports whether one of pids holds a TCP socket listening on
// port (IPv4 or IPv6), as /proc of this network namespace shows it.
func listensOn(pids []int, port int) bool {
	inodes := listeningInodes(port)
	if len(inodes) == 0 {
		return false
	}
	for _, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, _ := os.ReadDir(dir)
		for _, fd := range fds {
			link, _ := os.Readlink(dir + "/" + fd.Name())
			if inode, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(inode, "]")] {
				return true
			}
		}
	}
	return false
}

// listeningInodes are the socket inodes of the TCP listeners on port.
func listeningInodes(port int) map[string]bool {
	suffix := fmt.Sprintf(":%04X", port)
	out := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, _ := os.ReadFile(table)
		for _, line := range strings.Split(string(data), "\n") {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			f := strings.Fields(line)
			if len(f) >= 10 && f[3] == "0A" && strings.HasSuffix(f[1], suffix) {
				out[f[9]] = true
			}
		}
	}
	return out
}
