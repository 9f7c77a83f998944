// Package template implements the `osb template` commands: create, get,
// list and delete.
package template

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

// templates is what get and delete need to know about templates.
var templates = cmdutil.Resource[client.Template, templateView]{
	Noun: "template", Title: "Template", Arg: cmdutil.TemplateArg,
	Get: func(ctx context.Context, c *client.Client, id string) (*client.Template, error) {
		return c.GetTemplate(ctx, id)
	},
	Delete: func(ctx context.Context, c *client.Client, id string) error { return c.DeleteTemplate(ctx, id) },
	View:   newTemplateView,
}

// NewCmdTemplate returns the `template` group.
func NewCmdTemplate(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("template", "🏗 Manage sandbox templates (golden-image builds).")
	cmd.Long = "Manage templates: server-side presets of image, entrypoint, environment and\n" +
		"resources that sandboxes are created from with 'osb sandbox create --template'.\n" +
		"A template starts Pending and can back sandboxes once it is Succeeded."
	cmd.AddCommand(
		newCmdCreate(f),
		templates.GetVerb(f, "Show one template and its build status."),
		newCmdList(f),
		templates.DeleteVerb(f, "Delete a template; sandboxes created from it keep running."),
	)
	return cmd
}
