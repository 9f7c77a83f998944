package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The init of a sandbox with an agent tells the server, on the pipe it
// reported the sandbox ready on (fdReady, kept open after that line), each
// time the agent dies and each time it restarts it, so that the server can
// show a dead execd in the sandbox's status without asking it. Only the
// init holds that pipe's end: no process of the sandbox can write to it
// (the agent's directory, which they share, is theirs to write).

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

// format is one report, a line: deaths, state, time (Unix ns), how.
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

// watchExecd keeps the init's reports, read from r (the rest of the ready
// pipe), until the init is gone.
func (s *Sandbox) watchExecd(r *bufio.Reader, pipe *os.File) {
	defer pipe.Close()
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// Not a report of the init's: skip to the next line.
			for err == bufio.ErrBufferFull {
				_, err = r.ReadSlice('\n')
			}
			continue
		}
		if err != nil {
			return
		}
		if d, ok := parseExecdDown(string(line)); ok {
			s.execd.Store(&d)
		}
	}
}

// ExecdDeaths is what the sandbox's init last told of its agent's deaths;
// false when it never died (or the sandbox has no agent).
func (s *Sandbox) ExecdDeaths() (ExecdDown, bool) {
	d := s.execd.Load()
	if d == nil {
		return ExecdDown{}, false
	}
	return *d, true
}

// AgentGenEnv tells an agent how many agents died in its sandbox before
// it started: its generation, which it adds to its id (AgentGeneration).
const AgentGenEnv = "OSB_SANDBOX_AGENT_GEN"

// AgentGeneration is the generation an agent's id (execd.AgentHeader)
// carries, before its first dot; 0 when it carries none.
func AgentGeneration(id string) int {
	g, _, _ := strings.Cut(id, ".")
	n, err := strconv.Atoi(g)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
