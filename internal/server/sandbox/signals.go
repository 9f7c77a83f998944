package sandbox

import (
	"os"
	"os/signal"
	"syscall"
)

// stillIgnored takes the signals the server was made to ignore (started
// under nohup, or in the background by a script, which ignores SIGINT):
// never read, so the server goes on ignoring them; only the registration
// matters.
var stillIgnored = make(chan os.Signal, 1)

// DefaultSignals gives the processes this one starts from now on the
// default action for SIGHUP and SIGINT, as a process in a container has.
// An ignored signal stays ignored across exec, one that has a handler
// does not: without this, every sandbox process of a server started under
// nohup would ignore SIGHUP (a shell's trap on it refused, a hangup not
// ending it). Tests call it for the osb processes they start. Called before each start, not once: what the server ignores
// can change (a test ignores a signal to see this work).
func DefaultSignals() {
	for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if signal.Ignored(sig) {
			signal.Notify(stillIgnored, sig)
		}
	}
}
