package config

import (
	"github.com/spf13/cobra"
	"slices"

	"github.com/osb-dev/osb/internal/cmdutil"
	cfg "github.com/osb-dev/osb/internal/config"
	"github.com/osb-dev/osb/internal/output"
)

type showOptions struct {
	f      *cmdutil.Factory
	Format string
}

func newCmdShow(f *cmdutil.Factory, runF func(*showOptions) error) *cobra.Command {
	opts := &showOptions{f: f}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the resolved configuration (API key masked).",
		Long: "Show every setting as osb resolves it from flags, environment, the config file and defaults.\n" +
			"The API key is masked. The table view also says where each value came from.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runShow(opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

// resolvedView is the official client's `config show` object, in its key order.
func resolvedView(c *cfg.Config) output.Obj {
	var key any
	if c.APIKey != "" {
		key = cfg.MaskSecret(c.APIKey)
	}
	var domain any
	if c.Domain != "" {
		domain = c.Domain
	}
	return output.Obj{
		{Key: "api_key", Value: key},
		{Key: "domain", Value: domain},
		{Key: "protocol", Value: c.Protocol},
		{Key: "request_timeout", Value: c.RequestTimeout},
		{Key: "use_server_proxy", Value: c.UseServerProxy},
		{Key: "color", Value: c.Color},
		{Key: "default_image", Value: c.DefaultImage},
		{Key: "default_timeout", Value: c.DefaultTimeout},
		{Key: "config_path", Value: c.Path},
		{Key: "config_file_exists", Value: c.FileExists},
	}
}

// ownView holds the settings only osb has. The table shows them; json and
// yaml keep the official client's object as it is.
func ownView(c *cfg.Config) output.Obj {
	return output.Obj{{Key: "idle_timeout", Value: c.IdleTimeout}}
}

func runShow(opts *showOptions) error {
	c, err := opts.f.Config()
	if err != nil {
		return err
	}
	p := opts.f.Printer(opts.Format)
	view := resolvedView(c)
	if p.Structured() {
		return p.Data(view)
	}
	// osb's own settings sit beside the official one they go with.
	at := slices.IndexFunc(view, func(kv output.KV) bool { return kv.Key == "request_timeout" }) + 1
	view = slices.Insert(view, at, ownView(c)...)
	rows := make([]output.Obj, len(view))
	for i, kv := range view {
		source := c.Sources[kv.Key]
		if source == "" {
			source = "-"
		}
		rows[i] = output.Obj{{Key: "key", Value: kv.Key}, {Key: "value", Value: kv.Value}, {Key: "source", Value: source}}
	}
	return p.List("Resolved Configuration", []string{"key", "value", "source"}, rows)
}
