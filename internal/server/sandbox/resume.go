package sandbox

import (
	"fmt"
	"os"
)

// continueWaiters sends SIGCONT to the host processes that wait for the
// sandbox's processes from outside it: the nsenter in front of every command
// of an isolated sandbox stops itself when its child stops, and continues
// the child only once continued itself. Left stopped, it would never reap
// the command: a resumed command could never be seen to finish, and
// killing the sandbox would leave it behind.
func continueWaiters(members []int) {
	in := make(map[int]bool, len(members))
	for _, pid := range members {
		in[pid] = true
	}
	self := os.Getpid() // the parent of every init and nsenter: never stopped
	for _, pid := range members {
		if st, err := readStat(pid); err == nil && st.ppid > 1 && st.ppid != self && !in[st.ppid] {
			kill(st.ppid, sigCont)
		}
	}
}

// stoppable drops, in an isolated sandbox, the members outside its pid
// namespace: the nsenter in front of each command, which stops itself
// once its child has stopped and continues the child once continued.
// Stopped by Pause as well, it could be stopped before it had seen its
// child stop; continued, it would then see that stop late and stop itself
// for good, and never reap the command.
func (s *Sandbox) stoppable(pids []int) []int {
	a := s.anchor.Load()
	if a == nil || !a.isolated || a.pidNS == "" {
		return pids
	}
	out := pids[:0:0]
	for _, pid := range pids {
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err != nil || ns == a.pidNS {
			out = append(out, pid)
		}
	}
	return out
}
