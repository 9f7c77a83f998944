package config

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	cfg "github.com/osb-dev/osb/internal/config"
	"github.com/osb-dev/osb/internal/output"
)

type getOptions struct {
	f      *cmdutil.Factory
	Key    string
	Format string
}

func newCmdGet(f *cmdutil.Factory, runF func(*getOptions) error) *cobra.Command {
	opts := &getOptions{f: f}
	cmd := &cobra.Command{
		Use:   "get KEY",
		Short: "Print the resolved value of one key, e.g. connection.domain.",
		Long: "Print the value osb would use for KEY (section.field), after flags, environment,\n" +
			"the config file and defaults. The API key is masked.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runGet(opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "raw", "raw", "json", "yaml")
	return cmd
}

// viewKey maps a file key to its name in the resolved view.
var viewKey = map[string]string{
	"connection.api_key":          "api_key",
	"connection.domain":           "domain",
	"connection.protocol":         "protocol",
	"connection.request_timeout":  "request_timeout",
	"connection.idle_timeout":     "idle_timeout",
	"connection.use_server_proxy": "use_server_proxy",
	"output.color":                "color",
	"defaults.image":              "default_image",
	"defaults.timeout":            "default_timeout",
}

func runGet(opts *getOptions) error {
	key, err := cfg.LookupKey(opts.Key)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	c, err := opts.f.Config()
	if err != nil {
		return err
	}
	name := viewKey[key.Name]
	value, found := resolvedView(c).Get(name)
	if !found {
		value, _ = ownView(c).Get(name)
	}
	if name == "domain" && value == nil {
		value = c.EffectiveDomain()
	}
	p := opts.f.Printer(opts.Format)
	if p.Structured() {
		source := c.Sources[name]
		if source == "" {
			source = cfg.SourceFile
			if value == nil {
				source = cfg.SourceDefault
			}
		}
		return p.Data(output.Obj{{Key: "key", Value: key.Name}, {Key: "value", Value: value}, {Key: "source", Value: source}})
	}
	if value == nil {
		return nil
	}
	return p.Text(output.Cell(value))
}
