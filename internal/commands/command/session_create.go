package command

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

type sessionCreateOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Workdir string
}

func newCmdSessionCreate(f *cmdutil.Factory) *cobra.Command {
	opts := &sessionCreateOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[sessionCreateOptions]{
		Name:    "create",
		Short:   "Create a persistent bash session.",
		Long:    "Start a bash session and print its id, for 'osb command session run'.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Workdir, "workdir", "w", "", "Working directory of the session (created if missing).")
		},
		Run: runSessionCreate,
	})
}

// sessionView is what session create prints; working_directory is null
// when none was given.
type sessionView struct {
	SandboxID        string  `json:"sandbox_id"`
	SessionID        string  `json:"session_id"`
	WorkingDirectory *string `json:"working_directory"`
}

func runSessionCreate(ctx context.Context, opts *sessionCreateOptions) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	sid, err := dp.CreateSession(ctx, opts.Workdir)
	if err != nil {
		return err
	}
	v := sessionView{SandboxID: dp.SandboxID, SessionID: sid}
	if opts.Workdir != "" {
		v.WorkingDirectory = &opts.Workdir
	}
	return opts.Printer().Panel("Session Created", v)
}
