package cmdutil

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// FlagSet is where a verb declares its flags: pflag's own methods, and the
// kinds of flag osb has beyond them.
type FlagSet struct {
	*pflag.FlagSet
	cmd *cobra.Command
}

// Enum adds a flag whose value must be one of allowed (any case), completed
// with those values.
func (fs *FlagSet) Enum(target *string, name, short, def string, allowed []string, usage string) {
	EnumFlag(fs.cmd, target, name, short, def, allowed, usage)
}

// Pairs adds a repeatable KEY=VALUE flag.
func (fs *FlagSet) Pairs(p *Pairs, name, short, usage string) {
	PairsFlag(fs.FlagSet, p, name, short, usage)
}

// Duration adds a flag taking 10m / 1h30m / 90s style durations.
func (fs *FlagSet) Duration(v *DurationValue, name, short, usage string) {
	DurationFlag(fs.FlagSet, v, name, short, usage)
}

// Timeout adds a duration flag that must be more than zero: a timeout of
// 0 would end the wait (or the sandbox's life) at once.
func (fs *FlagSet) Timeout(v *DurationValue, name, short, usage string) {
	fs.VarP(durationFlag{v: v, positive: true}, name, short, usage)
}

// Given makes *set true when the named flag is on the command line, for a
// verb that tells an empty or zero value from no value at all.
func (fs *FlagSet) Given(name string, set *bool) {
	fl := fs.Lookup(name)
	fl.Value = givenValue{Value: fl.Value, set: set}
}

// Required marks flags the command cannot run without.
func (fs *FlagSet) Required(names ...string) {
	for _, n := range names {
		_ = fs.cmd.MarkFlagRequired(n)
	}
}

// Complete offers values for a flag.
func (fs *FlagSet) Complete(name string, values ...string) {
	_ = fs.cmd.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	})
}

// Hidden hides a flag from help.
func (fs *FlagSet) Hidden(name string) { _ = fs.MarkHidden(name) }

type givenValue struct {
	pflag.Value
	set *bool
}

func (g givenValue) Set(s string) error {
	*g.set = true
	return g.Value.Set(s)
}

// IsBoolFlag keeps a wrapped bool flag usable without a value.
func (g givenValue) IsBoolFlag() bool {
	b, ok := g.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
