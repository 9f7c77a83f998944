package config

import (
	"errors"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	cfg "github.com/osb-dev/osb/internal/config"
)

type initOptions struct {
	f      *cmdutil.Factory
	Force  bool
	Format string
}

func newCmdInit(f *cmdutil.Factory, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{f: f}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create a config file with every setting commented out.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runInit(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "Overwrite an existing config file.")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml")
	return cmd
}

func runInit(opts *initOptions) error {
	p := opts.f.Printer(opts.Format)
	path := opts.f.ConfigPath()
	if _, err := os.Stat(path); err == nil && !opts.Force {
		// Not a failure: the file the user wants is already there.
		p.Warning("Config file already exists at " + path + ". Use --force to overwrite.")
		return nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := cfg.WriteFile(path, []byte(cfg.Template)); err != nil {
		return err
	}
	return p.Success("Config file created: " + path)
}
