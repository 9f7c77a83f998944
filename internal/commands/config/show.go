package config

import (
	"context"
	"slices"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	cfg "github.com/osb-dev/osb/internal/config"
	"github.com/osb-dev/osb/internal/output"
)

type showOptions struct {
	cmdutil.Base
}

func newCmdShow(f *cmdutil.Factory) *cobra.Command {
	opts := &showOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[showOptions]{
		Name:  "show",
		Short: "Show the resolved configuration (API key masked).",
		Long: "Show every setting as osb resolves it from flags, environment, the config file and defaults.\n" +
			"The API key is masked. The table view also says where each value came from.",
		Formats: cmdutil.TableFormats,
		Run:     runShow,
	})
}

// resolvedView is the official client's `config show` object, in its key
// order; unset values are null.
type resolvedView struct {
	APIKey           *string `json:"api_key"`
	Domain           *string `json:"domain"`
	Protocol         string  `json:"protocol"`
	RequestTimeout   any     `json:"request_timeout"`
	UseServerProxy   bool    `json:"use_server_proxy"`
	Color            bool    `json:"color"`
	DefaultImage     *string `json:"default_image"`
	DefaultTimeout   *string `json:"default_timeout"`
	ConfigPath       string  `json:"config_path"`
	ConfigFileExists bool    `json:"config_file_exists"`
}

func newResolvedView(c *cfg.Config) resolvedView {
	v := resolvedView{Protocol: c.Protocol, RequestTimeout: c.RequestTimeout, UseServerProxy: c.UseServerProxy,
		Color: c.Color, DefaultImage: c.DefaultImage, DefaultTimeout: c.DefaultTimeout, ConfigPath: c.Path, ConfigFileExists: c.FileExists}
	if c.APIKey != "" {
		masked := cfg.MaskSecret(c.APIKey)
		v.APIKey = &masked
	}
	if c.Domain != "" {
		v.Domain = &c.Domain
	}
	return v
}

// ownFields holds the settings only osb has. The table shows them; json and
// yaml keep the official client's object as it is.
func ownFields(c *cfg.Config) output.Obj {
	return output.Obj{{Key: "idle_timeout", Value: c.IdleTimeout}}
}

// sourceRow is one line of the table: a key, its value, where it came from.
type sourceRow struct {
	Key    string `json:"key" table:"1"`
	Value  any    `json:"value" table:"2"`
	Source string `json:"source" table:"3"`
}

func runShow(_ context.Context, opts *showOptions) error {
	c, err := opts.Config()
	if err != nil {
		return err
	}
	p := opts.Printer()
	view := newResolvedView(c)
	if p.Structured() {
		return p.Data(view)
	}
	fields, err := output.Fields(view)
	if err != nil {
		return err
	}
	// osb's own settings sit beside the official one they go with.
	at := slices.IndexFunc(fields, func(kv output.KV) bool { return kv.Key == "request_timeout" }) + 1
	fields = slices.Insert(fields, at, ownFields(c)...)
	rows := make([]sourceRow, len(fields))
	for i, kv := range fields {
		source := c.Sources[kv.Key]
		if source == "" {
			source = "-"
		}
		rows[i] = sourceRow{Key: kv.Key, Value: kv.Value, Source: source}
	}
	return p.List("Resolved Configuration", rows)
}
