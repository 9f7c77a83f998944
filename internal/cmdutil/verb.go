package cmdutil

import (
	"context"
	"fmt"
	"github.com/osb-dev/osb/internal/ops"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/output"
)

// Verb declares one command: its usage, its typed arguments, its flags, the
// output formats it supports and what it does. NewVerb turns it into a
// cobra command; nothing else in a verb's file touches cobra.
type Verb[O any] struct {
	Name    string // the word typed; the usage line adds the arguments
	UseTail string // text after the arguments in the usage line, e.g. "--mode MODE"
	Aliases []string
	Short   string
	Long    string
	Example string

	Args []Arg // the positional arguments, in order

	// Formats is what -o accepts; nil means the verb has no -o. A verb with
	// json among its formats also gets --jq and --template.
	Formats *Formats

	// Prints is a value of the view the verb prints under json, for a
	// verb that changes something (a create): a -q or --jq whose first key
	// the view lacks is then a usage error before any request, not an
	// error after the thing was made. nil: the output is checked after.
	Prints any

	// Flags declares the verb's own flags, bound to fields of its options.
	Flags func(fs *FlagSet)

	// Run does the work once the line is parsed and checked. It checks its
	// own input before any request: such a failure is a UsageErrorf.
	Run func(ctx context.Context, opts *O) error

	// Subcommands are commands below this verb (`osb mcp install` below
	// `osb mcp`). A verb without arguments of its own takes a word after
	// it as a subcommand's name, and refuses an unknown one as a group
	// refuses it, with the nearest names. A verb with arguments (`command
	// shell SANDBOX_ID`, and `command shell ls SANDBOX_ID`) takes a first
	// word that names a subcommand as that, any other as its argument.
	Subcommands []*cobra.Command
}

// Options is what a verb's options struct is: one that embeds Base.
type Options[O any] interface {
	*O
	base() *Base
}

// NewVerb builds the command v declares over opts, whose Base it fills in:
// the Factory, and the -o, --jq and --template choices. Every usage error
// the builder finds (arguments, flags, formats, query, template) is
// reported before Run, so before any request.
func NewVerb[O any, P Options[O]](f *Factory, opts P, v Verb[O]) *cobra.Command {
	b := opts.base()
	b.Factory = f
	b.printsKeys = output.ViewKeys(v.Prints)
	cmd := &cobra.Command{
		Use:               usage(v.Name, v.Args, v.UseTail),
		Aliases:           v.Aliases,
		Short:             v.Short,
		Long:              v.Long,
		Example:           v.Example,
		Args:              checkArgs(v.Args),
		ValidArgsFunction: completeArgs(f, v.Args),
	}
	fs := &FlagSet{FlagSet: cmd.Flags(), cmd: cmd}
	if v.Flags != nil {
		v.Flags(fs)
	}
	if v.Formats != nil {
		b.addOutputFlags(fs, *v.Formats)
	}
	if hasCommandArg(v.Args) {
		cmd.SetFlagErrorFunc(separatorHint)
	}
	if len(v.Subcommands) > 0 {
		if len(v.Args) == 0 {
			cmd.Args = KnownSubcommand
		}
		cmd.AddCommand(v.Subcommands...)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		bindArgs(f, v.Args, args)
		if err := b.checkOutput(cmd); err != nil {
			return err
		}
		b.FormatGiven = v.Formats != nil && outputGiven(cmd)
		return v.Run(cmd.Context(), (*O)(opts))
	}
	return cmd
}

// usage is the usage line: the name, the argument placeholders, the tail.
func usage(name string, args []Arg, tail string) string {
	parts := []string{name}
	for _, a := range args {
		parts = append(parts, a.placeholder())
	}
	if tail != "" {
		parts = append(parts, tail)
	}
	return strings.Join(parts, " ")
}

// Base is embedded in every verb's options struct. The builder fills it
// in: the Factory (so options reach Client, Config, IOStreams directly)
// and what -o, --jq and --template chose.
type Base struct {
	*Factory
	// Format is the -o value, lower-case, or the verb's default.
	Format string
	// FormatGiven says -o was on the command line (or --jq or a template
	// chose json), for a verb whose default depends on other flags.
	FormatGiven bool

	query        string // -q: a gjson path
	jq           string // --jq: a jq expression
	template     string
	templateFlag string // --template, or --output-template where the verb has its own --template
	filter       output.Filter
	printsKeys   []string // the top-level keys of Verb.Prints
}

func (b *Base) base() *Base { return b }

// Printer prints in the chosen format, through --jq or --template when given.
func (b *Base) Printer() *output.Printer {
	p := b.Factory.Printer(b.Format)
	p.Filter = b.filter
	return p
}

// Formats is what -o accepts for one kind of verb.
type Formats struct {
	Allowed []string
	Default string // "": the verb decides (see Usage)
	Usage   string // the -o help, when the generated one would not say enough
}

// The kinds of output a verb has; each verb names one.
var (
	// A record, a list or a message for people, json and yaml for scripts.
	TableFormats = &Formats{Allowed: []string{output.Table, output.JSONF, output.YAMLF}, Default: output.Table}
	// Text or bytes as they are (a file's content, a server's text report).
	RawOnly = &Formats{Allowed: []string{output.Raw}, Default: output.Raw}
	// Text by default, the same data as json or yaml on request.
	TextFormats = &Formats{Allowed: []string{output.Raw, output.JSONF, output.YAMLF}, Default: output.Raw}
	// A table by default; raw for the text of a stream (metrics, logs).
	AllFormats = &Formats{Allowed: []string{output.Table, output.JSONF, output.YAMLF, output.Raw}, Default: output.Table}
)

func (f Formats) has(format string) bool {
	for _, a := range f.Allowed {
		if a == format {
			return true
		}
	}
	return false
}

// addOutputFlags adds -o, and --jq and --template when json is allowed.
func (b *Base) addOutputFlags(fs *FlagSet, f Formats) {
	help := f.Usage
	if help == "" {
		help = fmt.Sprintf("Output format: %s.", strings.Join(f.Allowed, ", "))
	}
	fs.Enum(&b.Format, outputFlag, "o", f.Default, f.Allowed, help)
	if !f.has(output.JSONF) {
		return
	}
	fs.StringVarP(&b.query, "query", "q", "", "Print only the value at this gjson `PATH` of the json output, e.g. id ('osb help formatting').")
	fs.StringVar(&b.jq, "jq", "", "Print what this jq `EXPRESSION` makes of the json output, e.g. .id ('osb help formatting').")
	// sandbox create has the official --template (the template to create
	// from): there the Go template flag goes by its long name.
	b.templateFlag = "template"
	if fs.Lookup("template") != nil {
		b.templateFlag = "output-template"
	}
	fs.StringVar(&b.template, b.templateFlag, "", "Print the json output through this Go `TEMPLATE`, e.g. '{{.id}}' ('osb help formatting').")
}

// checkOutput applies the rules of --jq and --template: they read the json
// document, so -o, when given, must be json; they cannot be combined; the
// path and the template must parse.
func (b *Base) checkOutput(cmd *cobra.Command) error {
	var given []string
	for _, f := range []struct{ name, value string }{{"-q", b.query}, {"--jq", b.jq}, {"--" + b.templateFlag, b.template}} {
		if f.value != "" {
			given = append(given, f.name)
		}
	}
	switch {
	case len(given) == 0:
		return nil
	case outputGiven(cmd) && b.Format != output.JSONF:
		return ops.UsageErrorf("%s works on the json output; it cannot be combined with -o %s", given[0], b.Format)
	}
	// Errors and warnings follow the json format too, this one included.
	if err := cmd.Flags().Set("output", output.JSONF); err != nil {
		return err
	}
	if len(given) > 1 {
		return ops.UsageErrorf("%s cannot be used together", strings.Join(given, " and "))
	}
	switch {
	case b.query != "":
		if err := output.CheckPath(b.query); err != nil {
			return &ops.ExitError{Code: ops.ExitUsage, Err: err}
		}
		b.filter = output.Filter{Query: b.query}
	case b.jq != "":
		jq, err := output.ParseJQ(b.jq)
		if err != nil {
			return &ops.ExitError{Code: ops.ExitUsage, Err: err}
		}
		b.filter = output.Filter{JQ: jq}
	default:
		t, err := output.ParseTemplate(b.template)
		if err != nil {
			return ops.UsageErrorf("invalid --%s: %v", b.templateFlag, err)
		}
		b.filter = output.Filter{Template: t, Now: b.Now}
	}
	if err := b.filter.CheckKeys(b.printsKeys); err != nil {
		return &ops.ExitError{Code: ops.ExitUsage, Err: err}
	}
	return nil
}

// outputFlag is -o. What it chose is read here only: by the builder for
// the run (Base.Format, FormatGiven) and by FormatOf for the error.
const outputFlag = "output"

// outputGiven says -o was on the command line, or --jq or --template set it.
func outputGiven(cmd *cobra.Command) bool { return cmd.Flags().Changed(outputFlag) }

// FormatOf is the format a command line asked for, for its error: table
// for a command without -o. Flag parsing stops at the first bad flag, so
// an -o json after it is read from the words: a script asked for a JSON
// error, bad flag or not.
func FormatOf(cmd *cobra.Command, args []string) string {
	if cmd == nil {
		return output.Table
	}
	fl := cmd.Flags().Lookup(outputFlag)
	switch {
	case fl == nil:
		return output.Table
	case !fl.Changed:
		// Only a format the command takes (the run is over: setting the
		// flag now changes nothing but this answer).
		if f := outputWord(args); f != "" && fl.Value.Set(f) == nil {
			return f
		}
		if filterGiven(cmd) {
			return output.JSONF // -q, --jq and --template imply -o json
		}
	}
	return fl.Value.String()
}

// outputWord finds -o json or -o yaml (in any of its spellings) among the
// words before "--".
func outputWord(args []string) string {
	for i, a := range args {
		var v string
		switch {
		case a == "--":
			return ""
		case (a == "-o" || a == "--"+outputFlag) && i+1 < len(args):
			v = args[i+1]
		case strings.HasPrefix(a, "--"+outputFlag+"="):
			v = strings.TrimPrefix(a, "--"+outputFlag+"=")
		case strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--"):
			v = strings.TrimPrefix(strings.TrimPrefix(a, "-o"), "=")
		}
		if f := strings.ToLower(v); f == output.JSONF || f == output.YAMLF {
			return f
		}
	}
	return ""
}

// filterGiven reports whether -q, --jq or the Go --template was given: a
// usage error found before they took effect is json all the same.
func filterGiven(cmd *cobra.Command) bool {
	fs := cmd.Flags()
	if fs.Lookup("jq") == nil {
		return false // no json output, so no filters: a --template is the verb's own
	}
	tmpl := "template"
	if fs.Lookup("output-template") != nil {
		tmpl = "output-template"
	}
	for _, name := range []string{"query", "jq", tmpl} {
		if fs.Changed(name) {
			return true
		}
	}
	return false
}
