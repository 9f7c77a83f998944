package file

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type chmodOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Path    string
	perm    permFlags
}

func newCmdChmod(f *cmdutil.Factory) *cobra.Command {
	opts := &chmodOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[chmodOptions]{
		Name:    "chmod",
		UseTail: "--mode MODE",
		Short:   "Set the permissions (and owner) of a file in the sandbox.",
		Long: "Set PATH's permission to --mode, given as digits (644, 0755), and its owner\n" +
			"and group when --owner or --group is given.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("PATH", &opts.Path)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			opts.perm.add(fs, "Permission mode, e.g. 644 or 0755 (required).", "File")
			fs.Required("mode")
		},
		Run: runChmod,
	})
}

func runChmod(ctx context.Context, opts *chmodOptions) error {
	perm, err := opts.perm.permission()
	if err != nil {
		return err
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	if err := dp.SetPermissions(ctx, map[string]client.Permission{opts.Path: perm}); err != nil {
		return err
	}
	return opts.Printer().Success("Permissions set: " + opts.Path)
}
