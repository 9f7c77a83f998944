// Package server implements `osb server`, a local OpenSandbox-compatible server.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type serverOptions struct {
	cmdutil.Base
	Listen  string
	APIKey  string
	DataDir string
}

// NewCmdServer returns `osb server`.
func NewCmdServer(f *cmdutil.Factory) *cobra.Command {
	opts := &serverOptions{}
	cmd := cmdutil.NewVerb(f, opts, cmdutil.Verb[serverOptions]{
		Name:  "server",
		Short: "Run a local OpenSandbox-compatible server (no Docker needed).",
		Long: "Run an OpenSandbox-compatible lifecycle and execd API on this machine.\n\n" +
			"Sandboxes are process trees with their own directories; images are not pulled,\n" +
			"the host's programs are used. The server runs in the foreground, logs to stderr,\n" +
			"prints its URL when ready, and on Ctrl-C or SIGTERM removes every sandbox.\n\n" +
			"The API key comes from --api-key, else OPEN_SANDBOX_API_KEY, else a generated one\n" +
			"that is printed once.",
		Example: "  osb server --listen 127.0.0.1:8080 --api-key dev-key\n" +
			"  OPEN_SANDBOX_API_KEY=dev-key osb --domain 127.0.0.1:8080 sandbox create -i python:3.11",
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVar(&opts.Listen, "listen", "127.0.0.1:8080", "Address to listen on.")
			fs.StringVar(&opts.APIKey, "api-key", "", "API key clients must send (default: OPEN_SANDBOX_API_KEY, else generated).")
			fs.StringVar(&opts.DataDir, "data-dir", "", "Directory for sandbox files (default: a temporary directory).")
		},
		Run: runServer,
	})
	cmd.Annotations = map[string]string{cmdutil.NoConfig: ""}
	return cmd
}

func runServer(ctx context.Context, opts *serverOptions) error {
	key := opts.APIKey
	if key == "" {
		// The root --api-key flag is shadowed by ours; the environment still counts.
		key = opts.Getenv("OPEN_SANDBOX_API_KEY")
	}
	stderr := opts.IOStreams.ErrOut
	if key == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		key = hex.EncodeToString(b)
		fmt.Fprintf(stderr, "Generated API key: %s\n", key)
	}
	return serve(ctx, settings{
		listen:  opts.Listen,
		apiKey:  key,
		dataDir: opts.DataDir,
	}, stderr)
}

// settings is what the server needs, independent of the platform.
type settings struct {
	listen, apiKey, dataDir string
}
