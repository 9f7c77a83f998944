package command

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type sessionCreateOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Workdir   string
	Format    string
}

func newCmdSessionCreate(f *cmdutil.Factory, runF func(*sessionCreateOptions) error) *cobra.Command {
	opts := &sessionCreateOptions{f: f}
	cmd := &cobra.Command{
		Use:   "create SANDBOX_ID",
		Short: "Create a persistent bash session.",
		Long:  "Start a bash session and print its id, for 'osb command session run'.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runSessionCreate(cmd, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Workdir, "workdir", "w", "", "Working directory of the session (created if missing).")
	cmdutil.OutputFlag(cmd, &opts.Format, output.Table, output.Table, output.JSONF, output.YAMLF)
	return cmd
}

func runSessionCreate(cmd *cobra.Command, opts *sessionCreateOptions) error {
	ctx := cmd.Context()
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	sid, err := dp.CreateSession(ctx, opts.Workdir)
	if err != nil {
		return err
	}
	var dir any
	if opts.Workdir != "" {
		dir = opts.Workdir
	}
	return opts.f.Printer(opts.Format).Panel("Session Created", output.Obj{
		{Key: "sandbox_id", Value: dp.SandboxID},
		{Key: "session_id", Value: sid},
		{Key: "working_directory", Value: dir},
	})
}
