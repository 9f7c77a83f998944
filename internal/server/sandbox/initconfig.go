package sandbox

// The host side and the sandbox init (init_linux.go) share these.

const (
	initEnv = "OSB_SANDBOX_INIT" // "1": be the init; "probe": exit 0 at once
	// The init's inherited descriptors (ExtraFiles of the host side).
	fdConfig = 3 // a socket: descriptors, JSON initConfig, then EOF once the init is in the sandbox's cgroup (conf_linux.go)
	fdReady  = 4 // "ready\n" once the sandbox can take requests, or readyFailed and why
	// The agent's, from the init: after its listener (3) and ready pipe
	// (4), its socket to the init (startGated).
	fdAgentInit = 5
)

// readyFailed starts the init's line on fdReady when it could not build
// the sandbox; the reason follows.
const readyFailed = "failed: "

// initConfig is what the host tells the init.
type initConfig struct {
	Hostname   string
	TrustedCA  []byte // PEM added to the system's roots in CABundle
	Entrypoint []string
	Env        []string    // of the entrypoint
	Binds      []bindSpec  // host directories (passed as descriptors) mounted read-write
	Agent      *agentStart // nil: no in-sandbox agent
	// Rootless: the sandbox's user namespace maps only its root, to the
	// server's own (unprivileged) uid and gid.
	Rootless bool
	// SocketsFD, when not 0, is the init's end of a socket pair on which
	// it makes sockets in the sandbox's network for the server (see
	// serveSockets): a server without root cannot enter that network.
	SocketsFD int
	// NoFile, when not 0, is the RLIMIT_NOFILE (soft and hard) of every
	// process of the sandbox (noFileLimit).
	NoFile uint64
	// ProcsFD and ReserveFD, when not 0, are the cgroup.procs of the
	// cgroup of the sandbox's processes and of the init's and execd's
	// reserve, opened by the server (confine_linux.go).
	ProcsFD, ReserveFD int
	// Rootfs: the root is an image's (rootfs_linux.go); nil: the host's
	// program directories on a private tmpfs.
	Rootfs *rootfsSpec
}

// rootfsSpec is an image root: its layers under the sandbox's own
// writable layer (an overlay), or, Copied, a tree the server copied.
type rootfsSpec struct {
	Layers  []bindSpec // read-only, lowest first
	Upper   bindSpec   // the sandbox's directory for its writable layer (or copied tree)
	Copied  bool
	WorkDir string // of the entrypoint
	User    *User  // of the entrypoint; nil: root
}

// bindSpec attaches the detached mount open as descriptor FD at Target,
// or (rootless, FD 0) bind-mounts the host directory Source there.
type bindSpec struct {
	FD       int
	Source   string
	Target   string
	ReadOnly bool
}

// agentStart tells the init how to start the in-sandbox agent: the same
// binary with AgentEnv set to Config, handed the listener FD as
// descriptor 3 and the ready pipe as 4.
type agentStart struct {
	Config     string
	ListenerFD int
}

// AgentEnv is set (to the agent's JSON configuration) in the environment
// of the in-sandbox agent process; see package agent.
const AgentEnv = "OSB_SANDBOX_AGENT"
