package commands

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/build"
	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

// versionWait bounds the question to the server: `osb version` answers at
// once even when the server is down or unreachable.
const versionWait = 3 * time.Second

type versionOptions struct {
	cmdutil.Base
}

// versionView is what `osb version -o json` prints.
type versionView struct {
	Version string            `json:"version"`
	Commit  string            `json:"commit,omitempty"`
	Built   string            `json:"built,omitempty"`
	Server  serverVersionView `json:"server"`
}

type serverVersionView struct {
	Domain  string `json:"domain"`
	Version string `json:"version,omitempty"` // "" when it did not answer
	Error   string `json:"error,omitempty"`   // why it did not
}

func newCmdVersion(f *cmdutil.Factory) *cobra.Command {
	opts := &versionOptions{}
	cmd := cmdutil.NewVerb(f, opts, cmdutil.Verb[versionOptions]{
		Name:  "version",
		Short: "Show osb's version and the server's.",
		Long: "Print what --version prints, then the version of the configured server when\n" +
			"it answers within a few seconds. A server that is down or unreachable is\n" +
			"reported on that line; the command still exits 0.",
		Formats: cmdutil.TextFormats,
		Run:     runVersion,
	})
	// A broken configuration file must not hide the version: it is read
	// only for the server line.
	cmd.Annotations = map[string]string{cmdutil.NoConfig: ""}
	return cmd
}

func runVersion(ctx context.Context, opts *versionOptions) error {
	v := versionView{Version: build.Version, Commit: build.Commit, Built: build.Date, Server: serverVersion(ctx, opts.Factory)}
	p := opts.Printer()
	if p.Structured() {
		return p.Data(v)
	}
	line := "server " + v.Server.Domain + ": version " + v.Server.Version
	if v.Server.Error != "" {
		line = "server " + v.Server.Domain + ": " + v.Server.Error
	}
	if v.Server.Domain == "" {
		line = "server: " + v.Server.Error
	}
	return p.Text(strings.TrimSuffix(versionText(), "\n") + "\n" + output.Printable(line))
}

// serverVersion asks the configured server, briefly; what went wrong is
// part of the answer, never an error of the command.
func serverVersion(ctx context.Context, f *cmdutil.Factory) serverVersionView {
	c, err := f.Client()
	if err != nil {
		return serverVersionView{Error: "not configured: " + err.Error()}
	}
	cfg, _ := f.Config() // Client succeeded, so the configuration did too
	sv := serverVersionView{Domain: cfg.EffectiveDomain()}
	ctx, cancel := context.WithTimeout(ctx, versionWait)
	defer cancel()
	ver, err := c.ServerVersion(ctx)
	switch {
	case err == nil && ver != "":
		sv.Version = ver
	case err == nil, client.IsStatus(err, http.StatusNotFound):
		sv.Error = "reachable, but it does not say its version"
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		sv.Error = fmt.Sprintf("no answer within %s", versionWait)
	default:
		sv.Error = "not reachable: " + err.Error()
	}
	return sv
}
