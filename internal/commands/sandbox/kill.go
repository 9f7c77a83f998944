package sandbox

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type killOptions struct {
	cmdutil.Base
	Sandboxes []cmdutil.Sandbox
}

func newCmdKill(f *cmdutil.Factory) *cobra.Command {
	opts := &killOptions{}
	cmd := cmdutil.NewVerb(f, opts, cmdutil.Verb[killOptions]{
		Name:  "kill",
		Short: "Delete one or more sandboxes.",
		Long: "Delete sandboxes one after the other. The first failure stops the command:\n" +
			"sandboxes before it are already gone, and nothing is printed but the error.\n" +
			"Each SANDBOX_ID may be any unique prefix of an id.",
		Args:    []cmdutil.Arg{cmdutil.SandboxesArg(&opts.Sandboxes)},
		Formats: cmdutil.TableFormats,
		Run:     runKill,
	})
	// The words other tools use for it are suggested, not taken: the
	// official client has none of them.
	cmd.SuggestFor = []string{"delete", "rm", "remove", "destroy"}
	return cmd
}

// killedView is one row of the kill result.
type killedView struct {
	SandboxID string `json:"sandbox_id" table:"1"`
	Status    string `json:"status" table:"2"`
}

func runKill(ctx context.Context, opts *killOptions) error {
	rows := make([]killedView, 0, len(opts.Sandboxes))
	for _, sb := range opts.Sandboxes {
		err := sb.Do(ctx, func(c *client.Client, full string) error {
			if err := c.DeleteSandbox(ctx, full); err != nil {
				return err
			}
			rows = append(rows, killedView{SandboxID: full, Status: "terminated"})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return opts.Printer().List("Sandboxes", rows)
}
