// Package template implements the `osb template` commands: create, get,
// list and delete.
package template

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdTemplate returns the `template` group.
func NewCmdTemplate(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("template", "🏗 Manage sandbox templates (golden-image builds).")
	cmd.Long = "Manage templates: server-side presets of image, entrypoint, environment and\n" +
		"resources that sandboxes are created from with 'osb sandbox create --template'.\n" +
		"A template starts Pending and can back sandboxes once it is Succeeded."
	cmd.AddCommand(
		newCmdCreate(f, nil),
		newCmdGet(f, nil),
		newCmdList(f, nil),
		newCmdDelete(f, nil),
	)
	return cmd
}
