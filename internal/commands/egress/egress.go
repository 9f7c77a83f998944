// Package egress implements the `osb egress` commands: read and change a
// sandbox's runtime egress policy, through its egress sidecar or, for a
// sandbox made from a template, through the lifecycle server.
package egress

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

// NewCmdEgress returns the `egress` group.
func NewCmdEgress(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("egress", "Manage runtime egress policy for a sandbox.")
	cmd.AddCommand(
		newCmdGet(f),
		newCmdPatch(f),
		newCmdDelete(f),
	)
	return cmd
}

// warnNotEnforced tells the user when the server says it stores rules
// without enforcing them (the local osb server does).
func warnNotEnforced(p *output.Printer, st *client.PolicyStatus) {
	if st.EnforcementMode != "none" {
		return
	}
	if st.Reason != "" {
		p.Warning(st.Reason)
	} else {
		p.Warning("this server stores egress rules but does not enforce them")
	}
}
