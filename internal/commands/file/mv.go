package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type mvOptions struct {
	cmdutil.Base
	Sandbox     cmdutil.Sandbox
	Source      string
	Destination string
}

func newCmdMv(f *cmdutil.Factory) *cobra.Command {
	opts := &mvOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[mvOptions]{
		Name:  "mv",
		Short: "Move or rename a file or directory in the sandbox.",
		Long: "Move SOURCE to DESTINATION, creating DESTINATION's missing parent\n" +
			"directories. An existing DESTINATION is never replaced: the move fails.",
		Args: []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("SOURCE", &opts.Source),
			cmdutil.StringArg("DESTINATION", &opts.Destination)},
		Formats: cmdutil.TableFormats,
		Run:     runMv,
	})
}

func runMv(ctx context.Context, opts *mvOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	if err := dp.MoveFiles(ctx, []client.Move{{Src: opts.Source, Dest: opts.Destination}}); err != nil {
		return err
	}
	return opts.Printer().Success("Moved: " + opts.Source + " → " + opts.Destination)
}
