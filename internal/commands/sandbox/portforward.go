package sandbox

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/portforward"
)

type portForwardOptions struct {
	cmdutil.Base
	Sandbox  cmdutil.Sandbox
	Mappings []string
	Address  string
}

func newCmdPortForward(f *cmdutil.Factory) *cobra.Command {
	opts := &portForwardOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[portForwardOptions]{
		Name:  "port-forward",
		Short: "Forward local ports to ports of a sandbox.",
		Long: "Listen on local ports and forward HTTP, WebSocket and server-sent events to\n" +
			"ports of the sandbox, so that a browser or curl on this machine reaches a dev\n" +
			"server running inside it. Each [LOCAL:]REMOTE forwards LOCAL to REMOTE (REMOTE\n" +
			"alone uses the same number; LOCAL 0 takes a free port, printed).\n\n" +
			"Requests go to the endpoint the server gives for the port, with the headers\n" +
			"that endpoint needs added (routing and access headers, as on Kubernetes-backed\n" +
			"servers), through the server's proxy under --use-server-proxy. The listeners\n" +
			"are on 127.0.0.1 unless --address says otherwise: whoever reaches them reaches\n" +
			"the sandbox with those headers. Runs until interrupted: Ctrl-C exits 130,\n" +
			"SIGTERM 143, SIGHUP 129 ('osb help exit-codes').",
		Example: "  osb sandbox port-forward 3f2a 8080            # localhost:8080 -> port 8080\n" +
			"  osb sandbox port-forward 3f2a 3000:5173 0:8000 # two ports, one chosen freely",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringsArg("[LOCAL:]REMOTE", &opts.Mappings)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVar(&opts.Address, "address", "127.0.0.1", "Local `ADDRESS` to listen on.")
		},
		Run: runPortForward,
	})
}

// forwardView is one listening forward, as printed.
type forwardView struct {
	SandboxID  string `json:"sandbox_id"`
	Local      string `json:"local" table:"1"`
	RemotePort int    `json:"remote_port" table:"2"`
	URL        string `json:"url"`
}

func runPortForward(ctx context.Context, opts *portForwardOptions) error {
	specs, err := parseSpecs(opts.Mappings)
	if err != nil {
		return err
	}
	if net.ParseIP(opts.Address) == nil && opts.Address != "localhost" {
		return ops.UsageErrorf("--address must be an IP address or localhost, not '%s'", opts.Address)
	}
	targets := make([]*client.DataPlane, len(specs))
	for i, s := range specs {
		err := opts.Sandbox.Do(ctx, func(c *client.Client, id string) error {
			var err error
			targets[i], err = c.DataPlane(ctx, id, s.Remote)
			return err
		})
		if err != nil {
			return err
		}
	}
	listeners := make([]net.Listener, len(specs))
	for i, s := range specs {
		ln, err := net.Listen("tcp", net.JoinHostPort(opts.Address, strconv.Itoa(s.Local)))
		if err != nil {
			closeAll(listeners)
			return fmt.Errorf("cannot listen on %s port %d: %w", opts.Address, s.Local, err)
		}
		listeners[i] = ln
	}
	p := opts.Printer()
	parent := ctx
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make(chan error, len(specs))
	for i, s := range specs {
		base, headers, err := targets[i].ForwardTarget()
		if err != nil {
			closeAll(listeners)
			return err
		}
		local := listeners[i].Addr().String()
		v := forwardView{SandboxID: targets[i].SandboxID, Local: local, RemotePort: s.Remote, URL: "http://" + local}
		if p.Structured() {
			err = p.Line(v)
		} else {
			err = p.Text(fmt.Sprintf("Forwarding from %s -> %d", local, s.Remote))
		}
		if err != nil {
			closeAll(listeners)
			return err
		}
		h := portforward.Handler(base, headers, portforward.Transport(), func(format string, a ...any) {
			fmt.Fprintf(opts.IOStreams.ErrOut, format+"\n", a...)
		})
		ln := listeners[i]
		go func() { errs <- portforward.Serve(ctx, ln, h) }()
	}
	// One listener failing ends them all.
	var first error
	for range specs {
		if err := <-errs; err != nil && first == nil {
			first = err
			stop()
		}
	}
	if first == nil && parent.Err() != nil {
		// Stopped by Ctrl-C or a signal: the exit code says which, as
		// for any command a signal ends (130, 143, 129).
		return ops.Silent(ops.InterruptedCode(parent))
	}
	return first
}

func parseSpecs(words []string) ([]portforward.Spec, error) {
	var specs []portforward.Spec
	seen := map[int]bool{}
	for _, w := range words {
		s, err := portforward.ParseSpec(w)
		if err != nil {
			return nil, ops.UsageErrorf("%v", err)
		}
		if s.Local != 0 && seen[s.Local] {
			return nil, ops.UsageErrorf("local port %d is given twice", s.Local)
		}
		seen[s.Local] = true
		specs = append(specs, s)
	}
	return specs, nil
}

func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		if ln != nil {
			ln.Close()
		}
	}
}
