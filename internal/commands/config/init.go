package config

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	cfg "github.com/osb-dev/osb/internal/config"
)

type initOptions struct {
	cmdutil.Base
	Force bool
}

func newCmdInit(f *cmdutil.Factory) *cobra.Command {
	opts := &initOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[initOptions]{
		Name:    "init",
		Short:   "Create a config file with every setting commented out.",
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.BoolVar(&opts.Force, "force", false, "Overwrite an existing config file.")
		},
		Run: runInit,
	})
}

func runInit(_ context.Context, opts *initOptions) error {
	p := opts.Printer()
	path := opts.ConfigPath()
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
