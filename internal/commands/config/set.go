package config

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	cfg "github.com/osb-dev/osb/internal/config"
	"github.com/osb-dev/osb/internal/ops"
)

type setOptions struct {
	cmdutil.Base
	Key   string
	Value string
}

func newCmdSet(f *cmdutil.Factory) *cobra.Command {
	opts := &setOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[setOptions]{
		Name:  "set",
		Short: "Set a key in the config file, e.g. connection.domain localhost:8080.",
		Long: "Set KEY (section.field) to VALUE in the config file. Only that line changes:\n" +
			"comments and other keys are kept. Unknown keys and values of the wrong type\n" +
			"are refused. Run 'osb config init' first.",
		Args:    []cmdutil.Arg{cmdutil.StringArg("KEY", &opts.Key), cmdutil.ValueArg("VALUE", &opts.Value)},
		Formats: cmdutil.TableFormats,
		Run:     runSet,
	})
}

func runSet(_ context.Context, opts *setOptions) error {
	key, err := cfg.LookupKey(opts.Key)
	if err != nil {
		return ops.UsageErrorf("%v", err)
	}
	literal, err := key.Literal(opts.Value)
	if err != nil {
		return ops.UsageErrorf("%v", err)
	}
	path := opts.ConfigPath()
	text, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ops.UsageErrorf("config file not found: %s. Run 'osb config init' first", path)
	}
	if err != nil {
		return err
	}
	// An edit by line is only safe on a file that parses: on a broken one
	// it could add a second [section] or hide the mistake. Nothing is written.
	if _, err := cfg.Parse(text); err != nil {
		return ops.UsageErrorf("config file %s is not valid TOML (%v); fix it, or start again with 'osb config init --force'", path, err)
	}
	updated := cfg.SetValue(string(text), key.Name, literal)
	if _, err := cfg.Parse([]byte(updated)); err != nil {
		return ops.UsageErrorf("setting %s would make %s invalid TOML (%v); nothing was changed", key.Name, path, err)
	}
	if err := cfg.WriteFile(path, []byte(updated)); err != nil {
		return err
	}
	shown := opts.Value
	if key.Secret {
		shown = cfg.MaskSecret(shown)
	}
	return opts.Printer().Success("Set " + key.Name + " = " + shown)
}
