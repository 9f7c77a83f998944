package cmdutil

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
)

// Arg is one positional argument of a verb: its placeholder in the usage
// line, how many words it takes, where it is stored, and how a shell
// completes it.
type Arg struct {
	name     string
	min, max int // words taken; max -1: any number
	optional bool
	command  bool // the rest of the line, after --
	set      func(f *Factory, words []string)
	complete func(f *Factory) cobra.CompletionFunc // nil: no candidates
	local    bool                                  // a local path: the shell completes files
	// mayBeEmpty: "" is a value (config set KEY ""). Any other argument
	// given as "" is a mistake that would reach the server as a missing
	// path or id.
	mayBeEmpty bool
}

func (a Arg) placeholder() string {
	switch {
	case a.command && a.optional:
		return "[flags] [-- " + a.name + "...]"
	case a.command:
		return "[flags] -- " + a.name + "..."
	case a.optional && a.max < 0:
		return "[" + a.name + "...]"
	case a.optional:
		return "[" + a.name + "]"
	case a.max < 0:
		return a.name + "..."
	}
	return a.name
}

// Sandbox is a sandbox named on the command line by its id or any unique
// prefix of it. Its methods resolve the prefix when the server does not
// know the text as an id (see WithSandboxID).
type Sandbox struct {
	ID string
	f  *Factory
}

// Do runs op with the client and the sandbox's full id.
func (s Sandbox) Do(ctx context.Context, op func(c *client.Client, id string) error) error {
	c, err := s.f.Client()
	if err != nil {
		return err
	}
	return ops.WithSandboxID(ctx, c, s.ID, func(full string) error { return op(c, full) })
}

// Execd connects to the sandbox's execd.
func (s Sandbox) Execd(ctx context.Context) (*client.DataPlane, error) {
	return connect(ctx, s, func(c *client.Client, id string) (*client.DataPlane, error) {
		return c.DataPlane(ctx, id, client.PortExecd)
	})
}

// Egress connects to the sandbox's egress API: its sidecar, or the
// lifecycle server for a sandbox made from a template.
func (s Sandbox) Egress(ctx context.Context) (*client.Egress, error) {
	return connect(ctx, s, func(c *client.Client, id string) (*client.Egress, error) { return c.Egress(ctx, id) })
}

// connect is Do for an op that returns what it connected to.
func connect[T any](ctx context.Context, s Sandbox, op func(c *client.Client, id string) (T, error)) (v T, err error) {
	err = s.Do(ctx, func(c *client.Client, id string) error {
		v, err = op(c, id)
		return err
	})
	return v, err
}

// ValueArg is one word that may be empty, e.g. a setting's VALUE.
func ValueArg(name string, p *string) Arg {
	a := StringArg(name, p)
	a.mayBeEmpty = true
	return a
}

// SandboxArg is a SANDBOX_ID argument: a full id or a unique prefix,
// completed from the server's sandboxes.
func SandboxArg(p *Sandbox) Arg {
	return Arg{name: "SANDBOX_ID", min: 1, max: 1,
		set:      func(f *Factory, w []string) { *p = Sandbox{ID: w[0], f: f} },
		complete: func(f *Factory) cobra.CompletionFunc { return CompleteSandboxIDs(f, true) }}
}

// SandboxesArg is one or more SANDBOX_ID arguments.
func SandboxesArg(p *[]Sandbox) Arg {
	return Arg{name: "SANDBOX_ID", min: 1, max: -1,
		set: func(f *Factory, w []string) {
			*p = make([]Sandbox, len(w))
			for i, id := range w {
				(*p)[i] = Sandbox{ID: id, f: f}
			}
		},
		complete: func(f *Factory) cobra.CompletionFunc { return CompleteSandboxIDs(f, true) }}
}

// SnapshotArg is a SNAPSHOT_ID, completed from the server's snapshots.
func SnapshotArg(p *string) Arg {
	a := StringArg("SNAPSHOT_ID", p)
	a.complete = func(f *Factory) cobra.CompletionFunc { return CompleteListed(f, SnapshotCandidates) }
	return a
}

// TemplateArg is a TEMPLATE_ID, completed from the server's templates.
func TemplateArg(p *string) Arg {
	a := StringArg("TEMPLATE_ID", p)
	a.complete = func(f *Factory) cobra.CompletionFunc { return CompleteListed(f, TemplateCandidates) }
	return a
}

// StringArg is one required word, e.g. PATH.
func StringArg(name string, p *string) Arg {
	return Arg{name: name, min: 1, max: 1, set: func(_ *Factory, w []string) { *p = w[0] }}
}

// LocalPathArg is a path on this machine: the shell completes file names.
func LocalPathArg(name string, p *string) Arg {
	a := StringArg(name, p)
	a.local = true
	return a
}

// OptionalArg is one word that may be left out.
func OptionalArg(name string, p *string) Arg {
	return Arg{name: name, max: 1, optional: true, set: func(_ *Factory, w []string) {
		if len(w) > 0 {
			*p = w[0]
		}
	}}
}

// StringsArg is one or more words, e.g. PATH...
func StringsArg(name string, p *[]string) Arg {
	return Arg{name: name, min: 1, max: -1, set: func(_ *Factory, w []string) { *p = w }}
}

// OptionalStringsArg is any number of words, none included: [ID...].
func OptionalStringsArg(name string, p *[]string) Arg {
	return Arg{name: name, max: -1, optional: true, set: func(_ *Factory, w []string) { *p = w }}
}

// CommandArg is a command line to run, after --: one or more words.
func CommandArg(p *[]string) Arg {
	return Arg{name: "COMMAND", min: 1, max: -1, command: true, set: func(_ *Factory, w []string) { *p = w }}
}

// OptionalCommandArg is a command line after --, which may be left out.
func OptionalCommandArg(p *[]string) Arg {
	a := CommandArg(p)
	a.min, a.optional = 0, true
	return a
}

func hasCommandArg(args []Arg) bool {
	return len(args) > 0 && args[len(args)-1].command
}

// checkArgs counts the words each argument takes; a wrong count is a usage
// error (exit 2) naming what is missing or extra.
func checkArgs(args []Arg) cobra.PositionalArgs {
	return func(cmd *cobra.Command, words []string) error {
		err := countArgs(cmd, args, words)
		if err == nil {
			err = checkWords(args, words)
		}
		if err != nil {
			return &ops.FlagError{Err: err}
		}
		return nil
	}
}

// checkWords refuses words that would reach the server as something else
// than the user meant: an empty path or id (a request about nothing, or a
// listing), and "." or ".." as an id, which a URL reads as a step in its
// path (GET /v1/sandboxes/. is the listing).
func checkWords(args []Arg, words []string) error {
	for i, a := range args {
		if a.command {
			continue
		}
		for _, w := range argWords(args, words, i) {
			switch {
			case w == "" && !a.mayBeEmpty && a.name != "SANDBOX_ID": // ops.WithSandboxID says it its way
				return fmt.Errorf("%s is empty", a.name)
			case (w == "." || w == "..") && isID(a.name):
				return fmt.Errorf("%q is not a valid %s", w, a.name)
			}
		}
	}
	return nil
}

// isID reports whether an argument names something the server keys by
// id or name: such a word becomes one segment of a URL path.
func isID(name string) bool {
	return strings.HasSuffix(name, "_ID") || name == "NAME"
}

// argWords returns the words the i-th argument takes, as bindArgs binds them.
func argWords(args []Arg, words []string, i int) []string {
	fixed := 0
	for _, a := range args {
		fixed += a.min
	}
	rest := len(words) - fixed
	for j, a := range args {
		take := a.min
		if a.max != a.min {
			take += rest
		}
		take = min(take, len(words))
		if j == i {
			return words[:take]
		}
		words = words[take:]
	}
	return nil
}

func countArgs(cmd *cobra.Command, args []Arg, words []string) error {
	n := len(words)
	need, most := 0, 0
	for _, a := range args {
		need += a.min
		if a.max < 0 || most < 0 {
			most = -1
		} else {
			most += a.max
		}
	}
	if n < need {
		missing := missingArg(args, n)
		if missing.command {
			return fmt.Errorf("missing the command to run: %s", strings.Replace(cmd.UseLine(), "[flags] ", "", 1))
		}
		return fmt.Errorf("missing %s", missing.name)
	}
	if most >= 0 && n > most {
		if most == 0 {
			return fmt.Errorf("unexpected argument %q: %s takes none", words[most], cmd.CommandPath())
		}
		return fmt.Errorf("unexpected argument %q after %s", words[most], placeholders(args))
	}
	return nil
}

func placeholders(args []Arg) string {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.placeholder()
	}
	return strings.Join(names, " ")
}

// missingArg is the first argument that n words leave without its words.
func missingArg(args []Arg, n int) Arg {
	for _, a := range args {
		if n < a.min {
			return a
		}
		n -= a.min
	}
	return args[len(args)-1]
}

// bindArgs stores the words in the arguments' fields: each takes its
// minimum, the variadic or optional one the rest.
func bindArgs(f *Factory, args []Arg, words []string) {
	for i, a := range args {
		a.set(f, argWords(args, words, i))
	}
}

// completeArgs completes the argument at the position being typed.
func completeArgs(f *Factory, args []Arg) cobra.CompletionFunc {
	return func(cmd *cobra.Command, done []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		a, ok := argAt(args, len(done))
		switch {
		case !ok:
			return nil, cobra.ShellCompDirectiveNoFileComp
		case a.local:
			return nil, cobra.ShellCompDirectiveDefault
		case a.complete == nil:
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		first := 0
		for _, b := range args {
			if b.name == a.name && b.complete != nil {
				break
			}
			first += b.min
		}
		return a.complete(f)(cmd, done[first:], toComplete)
	}
}

// argAt is the argument the word at index i belongs to.
func argAt(args []Arg, i int) (Arg, bool) {
	for _, a := range args {
		if a.max < 0 || i < a.max {
			return a, true
		}
		i -= a.max
	}
	return Arg{}, false
}

// separatorHint points at -- when an option of the command to run was
// taken for one of osb's.
func separatorHint(cmd *cobra.Command, err error) error {
	if msg := err.Error(); strings.HasPrefix(msg, "unknown flag") || strings.HasPrefix(msg, "unknown shorthand") {
		err = fmt.Errorf("%w; put -- before the command if the option is its own", err)
	}
	return &ops.FlagError{Err: err}
}

// SandboxPath is a path that may be in a sandbox: ID:PATH (any unique
// prefix of the id) names PATH in that sandbox, "-" a tar stream on
// standard input or output, anything else a local path. A colon in a local
// path is read as such when a slash comes before it (./a:b, /tmp/a:b).
type SandboxPath struct {
	Sandbox *Sandbox // nil: local, or the stream
	Path    string
	Stream  bool // "-"
	Raw     string
}

// Remote reports whether the path is in a sandbox.
func (p SandboxPath) Remote() bool { return p.Sandbox != nil }

func parseSandboxPath(f *Factory, s string) SandboxPath {
	if s == "-" {
		return SandboxPath{Stream: true, Raw: s}
	}
	id, rest, ok := strings.Cut(s, ":")
	if !ok || id == "" || strings.ContainsAny(id, `/\`) || isDriveLetter(id) {
		return SandboxPath{Path: s, Raw: s}
	}
	return SandboxPath{Sandbox: &Sandbox{ID: id, f: f}, Path: rest, Raw: s}
}

// isDriveLetter: C:\x on Windows is a local path.
func isDriveLetter(id string) bool {
	return runtime.GOOS == "windows" && len(id) == 1 &&
		(id[0] >= 'a' && id[0] <= 'z' || id[0] >= 'A' && id[0] <= 'Z')
}

// SandboxPathArg is an argument that is ID:PATH, a local path or "-",
// completed as either (see CompleteSandboxPaths).
func SandboxPathArg(name string, p *SandboxPath) Arg {
	return Arg{name: name, min: 1, max: 1,
		set:      func(f *Factory, w []string) { *p = parseSandboxPath(f, w[0]) },
		complete: CompleteSandboxPaths}
}
