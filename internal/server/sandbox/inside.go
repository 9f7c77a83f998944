package sandbox

import (
	"cmp"
	"encoding/json"
	"os"
	"path"
)

// agentSocket is the agent's socket, in the sandbox's Dir on the host.
const agentSocket = "execd.sock"

// AgentConfig is what the in-sandbox agent is told about its sandbox.
type AgentConfig struct {
	ID  string            // sandbox id
	Env map[string]string // the sandbox env of the create request
	Dir string            // the agent's own directory, inside the sandbox
	// WorkDir and User are the defaults of commands (the image's).
	WorkDir string `json:",omitempty"`
	User    *User  `json:",omitempty"`
}

func (s *Sandbox) agentConfig() string {
	b, _ := json.Marshal(AgentConfig{ID: s.id, Env: s.env, Dir: agentDir, WorkDir: s.workDir, User: s.user})
	return string(b)
}

// Inside returns the sandbox as the agent running in it sees it: its
// filesystem is the whole of "/" (so the files API reads and writes any
// path, and the kernel answers for read-only parts), and commands are
// plain children of the agent, already in the sandbox's namespaces.
func Inside(cfg AgentConfig) (*Sandbox, error) {
	root, err := os.OpenRoot("/")
	if err != nil {
		return nil, err
	}
	s := &Sandbox{id: cfg.ID, dir: cfg.Dir, fsDir: "/", env: cfg.Env, inside: true, root: root,
		workDir: cmp.Or(cfg.WorkDir, "/workspace"), user: cfg.User,
		started: true, done: make(chan struct{}), killed: make(chan struct{})}
	s.anchor.Store(&anchor{exited: make(chan struct{})})
	s.cg = insideCgroup()
	s.initLink = &initLink{f: os.NewFile(fdAgentInit, "init")}
	return s, nil
}

// InAgent reports that this is the agent's view from inside the sandbox,
// whose network (and so any port bound here) is the sandbox's own.
func (s *Sandbox) InAgent() bool { return s.inside }

// resolveInside maps any path of the sandbox to a name for FS().
func resolveInside(p string) string {
	p = path.Clean(p)
	if p == "/" {
		return "."
	}
	return p[1:]
}

// insideMembers is every process of the sandbox but its init and agent.
func insideMembers() []int {
	self := os.Getpid()
	var out []int
	for _, pid := range listPIDs() {
		if pid == 1 || pid == self {
			continue
		}
		if st, err := readStat(pid); err == nil && st.state != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}
