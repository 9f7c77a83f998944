package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The init of a sandbox with an agent writes to execdStateFile, in the
// agent's directory, each time the agent dies and each time it restarts
// it, so that the server can show a dead execd in the sandbox's status
// without asking it.
const execdStateFile = "execd.state"

// ExecdDown is what the init last told of its agent's deaths.
type ExecdDown struct {
	Deaths    int       // how many times the agent died in this sandbox
	How       string    // how the last one ended: "killed by SIGKILL"
	At        time.Time // when the init restarts it, or restarted it
	Restarted bool      // a new agent runs (since At)
	Failed    bool      // the init could not start a new one (at At)
}

// Message tells a user what became of the sandbox's execd.
func (d ExecdDown) Message() string {
	at := d.At.UTC().Format("2006-01-02T15:04:05Z")
	times := fmt.Sprintf("it has died %d times", d.Deaths)
	if d.Deaths == 1 {
		times = "it has died once"
	}
	switch {
	case d.Failed:
		return fmt.Sprintf("execd %s and could not be restarted at %s (%s)", d.How, at, times)
	case d.Restarted:
		return fmt.Sprintf("execd %s and was restarted at %s, but has not answered yet (%s)", d.How, at, times)
	}
	return fmt.Sprintf("execd %s; the next restart is at %s (%s)", d.How, at, times)
}

// format is the file's one line: deaths, state, time (Unix ns), how.
func (d ExecdDown) format() string {
	state := "waiting"
	if d.Restarted {
		state = "restarted"
	} else if d.Failed {
		state = "failed"
	}
	return fmt.Sprintf("%d %s %d %s\n", d.Deaths, state, d.At.UnixNano(), d.How)
}

func parseExecdDown(line string) (ExecdDown, bool) {
	f := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 4)
	if len(f) != 4 {
		return ExecdDown{}, false
	}
	deaths, err1 := strconv.Atoi(f[0])
	at, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || deaths < 1 {
		return ExecdDown{}, false
	}
	return ExecdDown{Deaths: deaths, How: f[3], At: time.Unix(0, at),
		Restarted: f[1] == "restarted", Failed: f[1] == "failed"}, true
}

// writeExecdState replaces the file whole, so the server never reads half.
func writeExecdState(d ExecdDown) {
	tmp := agentDir + "/." + execdStateFile
	if os.WriteFile(tmp, []byte(d.format()), 0o644) == nil {
		os.Rename(tmp, agentDir+"/"+execdStateFile)
	}
}

// ExecdDeaths is what the sandbox's init last wrote of its agent's
// deaths; false when it never died (or the sandbox has no agent). As with
// EntrypointExit, a look holds for exitRecheck: a list of thousands of
// sandboxes opens each file once in that time.
func (s *Sandbox) ExecdDeaths() (ExecdDown, bool) {
	now := time.Now().UnixNano()
	if last := s.execdLooked.Load(); last != 0 && now-last < int64(exitRecheck) {
		d := s.execdSeen.Load()
		return *d, d.Deaths > 0
	}
	d, ok := s.ExecdDeathsNow()
	s.execdSeen.Store(&d)
	s.execdLooked.Store(now)
	return d, ok
}

// ExecdDeathsNow is ExecdDeaths read now.
func (s *Sandbox) ExecdDeathsNow() (ExecdDown, bool) {
	if !s.agent {
		return ExecdDown{}, false
	}
	f, err := os.Open(filepath.Join(s.dir, "agent", execdStateFile))
	if err != nil {
		return ExecdDown{}, false
	}
	defer f.Close()
	var buf [256]byte // the file is written by the sandbox's side: bounded
	n, _ := f.Read(buf[:])
	return parseExecdDown(string(buf[:n]))
}
