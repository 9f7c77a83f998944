package cmdutil_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

// -o is read in verb.go only: no other code of osb looks the flag up.
func TestOutputFlagReadInOnePlace(t *testing.T) {
	root := filepath.Join("..", "..")
	reads := regexp.MustCompile(`(Lookup|Changed|Set|Flag|GetString)\("output"`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && reads.Match(b) && filepath.ToSlash(path) != "../../internal/cmdutil/verb.go" {
			t.Errorf("%s reads the -o flag; cmdutil.FormatOf and Base.Format are the places", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
