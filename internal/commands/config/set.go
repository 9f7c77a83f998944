package config

import (
	"errors"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	cfg "github.com/osb-dev/osb/internal/config"
)

type setOptions struct {
	f      *cmdutil.Factory
	Key    string
	Value  string
	Format string
}

func newCmdSet(f *cmdutil.Factory, runF func(*setOptions) error) *cobra.Command {
	opts := &setOptions{f: f}
	cmd := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set a key in the config file, e.g. connection.domain localhost:8080.",
		Long: "Set KEY (section.field) to VALUE in the config file. Only that line changes:\n" +
			"comments and other keys are kept. Unknown keys and values of the wrong type\n" +
			"are refused. Run 'osb config init' first.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key, opts.Value = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return runSet(opts)
		},
	}
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runSet(opts *setOptions) error {
	key, err := cfg.LookupKey(opts.Key)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	literal, err := key.Literal(opts.Value)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	path := opts.f.ConfigPath()
	text, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cmdutil.UsageErrorf("config file not found: %s. Run 'osb config init' first", path)
	}
	if err != nil {
		return err
	}
	if err := cfg.WriteFile(path, []byte(cfg.SetValue(string(text), key.Name, literal))); err != nil {
		return err
	}
	shown := opts.Value
	if key.Secret {
		shown = cfg.MaskSecret(shown)
	}
	return opts.f.Printer(opts.Format).Success("Set " + key.Name + " = " + shown)
}
