package cmdutil_test

import (
	"context"
	"testing"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/iostreams"
)

type wordOptions struct {
	cmdutil.Base
	Word string
}

// A verb with an argument and subcommands (as `command shell SANDBOX_ID`
// and `command shell ls SANDBOX_ID`): a first word naming a subcommand
// runs it, any other is the verb's argument, and both get -o.
func TestVerbWithArgumentsAndSubcommands(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := cmdutil.New(ios, func(string) string { return "" })
	var ran []string
	verb := func(name string, subs ...*cobra.Command) *cobra.Command {
		opts := &wordOptions{}
		return cmdutil.NewVerb(f, opts, cmdutil.Verb[wordOptions]{
			Name:        name,
			Args:        []cmdutil.Arg{cmdutil.StringArg("WORD", &opts.Word)},
			Formats:     cmdutil.TableFormats,
			Subcommands: subs,
			Run: func(_ context.Context, o *wordOptions) error {
				ran = append(ran, name+" "+o.Word+" "+o.Format)
				return nil
			},
		})
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"abc"}, "shell abc table"},
		{[]string{"ls", "abc", "-o", "json"}, "ls abc json"},
		{[]string{"kill", "abc"}, "kill abc table"},
		{[]string{"lsx", "-o", "yaml"}, "shell lsx yaml"},
	} {
		ran = nil
		shell := verb("shell", verb("ls"), verb("kill"))
		shell.SetArgs(tc.args)
		if err := shell.Execute(); err != nil || len(ran) != 1 || ran[0] != tc.want {
			t.Errorf("%q: ran %q (%v), want %q", tc.args, ran, err, tc.want)
		}
	}
}
