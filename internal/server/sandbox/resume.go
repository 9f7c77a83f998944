package sandbox

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
	for _, pid := range members {
		if st, err := readStat(pid); err == nil && st.ppid > 1 && !in[st.ppid] {
			kill(st.ppid, sigCont)
		}
	}
}
