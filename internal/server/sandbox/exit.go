package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A container ends with its command. A sandbox here outlives its entrypoint
// (an init, or the plain script, owns it until Kill), so whoever started the
// entrypoint writes its exit code to exitFile when it ends, and the server
// reads it to show the sandbox as Terminated or Failed, as a real deployment
// shows an exited container.
const exitFile = "entrypoint.exit"

// exitPath is where the host finds the entrypoint's exit code: in the
// agent's directory (/run/osb inside) of an isolated sandbox.
func (s *Sandbox) exitPath() string {
	if s.isolated {
		return filepath.Join(s.dir, "agent", exitFile)
	}
	return filepath.Join(s.dir, exitFile)
}

// EntrypointExit reports whether the entrypoint has ended, its exit code
// (128+n when a signal ended it, as a shell reports it) and when.
func (s *Sandbox) EntrypointExit() (code int, at time.Time, ended bool) {
	f, err := os.Open(s.exitPath())
	if err != nil {
		return 0, time.Time{}, false
	}
	defer f.Close()
	var buf [32]byte
	n, _ := f.Read(buf[:])
	code, err = strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil { // not written whole yet
		return 0, time.Time{}, false
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, time.Time{}, false
	}
	return code, fi.ModTime(), true
}
