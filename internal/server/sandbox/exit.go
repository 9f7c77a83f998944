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

// entrypointExit is an ended entrypoint's exit code and time.
type entrypointExit struct {
	code int
	at   time.Time
}

// exitRecheck is how long a look that found the entrypoint running holds:
// a list of thousands of sandboxes, page after page, opens each file once
// in that time, not once per page.
const exitRecheck = 200 * time.Millisecond

// EntrypointExit reports whether the entrypoint has ended, its exit code
// (128+n when a signal ended it, as a shell reports it) and when. An end is
// seen at most exitRecheck after it happened.
func (s *Sandbox) EntrypointExit() (code int, at time.Time, ended bool) {
	if e := s.exit.Load(); e != nil {
		return e.code, e.at, true
	}
	now := time.Now().UnixNano()
	if last := s.exitLooked.Load(); last != 0 && now-last < int64(exitRecheck) {
		return 0, time.Time{}, false
	}
	s.exitLooked.Store(now)
	return s.readExit()
}

// EntrypointEnded is EntrypointExit without the recheck delay, for the data
// plane: a container's execd dies with its entrypoint, so no request may
// reach one whose entrypoint has ended, even a moment after.
func (s *Sandbox) EntrypointEnded() (code int, ended bool) {
	if e := s.exit.Load(); e != nil {
		return e.code, true
	}
	code, _, ended = s.readExit()
	return code, ended
}

// readExit reads the exit file and keeps what it found.
func (s *Sandbox) readExit() (code int, at time.Time, ended bool) {
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
	s.exit.Store(&entrypointExit{code: code, at: fi.ModTime()})
	return code, fi.ModTime(), true
}
