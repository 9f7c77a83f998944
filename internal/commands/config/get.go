package config

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	cfg "github.com/osb-dev/osb/internal/config"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

type getOptions struct {
	cmdutil.Base
	Key string
}

func newCmdGet(f *cmdutil.Factory) *cobra.Command {
	opts := &getOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[getOptions]{
		Name:  "get",
		Short: "Print the resolved value of one key, e.g. connection.domain.",
		Long: "Print the value osb would use for KEY (section.field), after flags, environment,\n" +
			"the config file and defaults. The API key is masked.",
		Args:    []cmdutil.Arg{cmdutil.StringArg("KEY", &opts.Key)},
		Formats: cmdutil.TextFormats,
		Run:     runGet,
	})
}

// valueView is get under json and yaml.
type valueView struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Source string `json:"source"`
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

func runGet(_ context.Context, opts *getOptions) error {
	key, err := cfg.LookupKey(opts.Key)
	if err != nil {
		return ops.UsageErrorf("%v", err)
	}
	c, err := opts.Config()
	if err != nil {
		return err
	}
	name := viewKey[key.Name]
	fields, err := output.Fields(newResolvedView(c))
	if err != nil {
		return err
	}
	value := plain(append(fields, ownFields(c)...), name)
	if name == "domain" && value == nil {
		value = c.EffectiveDomain()
	}
	p := opts.Printer()
	if p.Structured() {
		source := c.Sources[name]
		if source == "" {
			source = cfg.SourceFile
			if value == nil {
				source = cfg.SourceDefault
			}
		}
		return p.Data(valueView{Key: key.Name, Value: value, Source: source})
	}
	if value == nil {
		return nil
	}
	return p.Text(output.Cell(value))
}

// plain is the value of a view's key as JSON has it: an unset pointer is
// nil, a number a json.Number.
func plain(fields output.Obj, key string) any {
	v, _ := fields.Get(key)
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	_ = dec.Decode(&out)
	return out
}
