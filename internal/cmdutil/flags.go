package cmdutil

import (
	"fmt"
	"github.com/osb-dev/osb/internal/ops"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Pairs is an ordered list of KEY=VALUE flags; for a map, a later key wins.
type Pairs [][2]string

// Map returns the pairs as a map, or nil when there are none.
func (p Pairs) Map() map[string]string {
	if len(p) == 0 {
		return nil
	}
	m := make(map[string]string, len(p))
	for _, kv := range p {
		m[kv[0]] = kv[1]
	}
	return m
}

type pairsValue struct{ p *Pairs }

func (v pairsValue) String() string {
	parts := make([]string, len(*v.p))
	for i, kv := range *v.p {
		parts[i] = kv[0] + "=" + kv[1]
	}
	return strings.Join(parts, ",")
}
func (v pairsValue) Type() string { return "KEY=VALUE" }
func (v pairsValue) Set(s string) error {
	k, val, err := ops.ParseKeyValue(s)
	if err != nil {
		return err
	}
	// No flag of this kind has a use for an empty name (an environment
	// variable, a metadata label, a filter): it is a typo, refused here
	// rather than by the server or, worse, accepted by it.
	if k == "" {
		return fmt.Errorf("the KEY before '=' is empty")
	}
	*v.p = append(*v.p, [2]string{k, val})
	return nil
}

// PairsFlag adds a repeatable KEY=VALUE flag.
func PairsFlag(fs *pflag.FlagSet, p *Pairs, name, short, usage string) {
	fs.VarP(pairsValue{p}, name, short, usage)
}

// DurationValue holds a parsed duration flag; Set reports whether it was given.
type DurationValue struct {
	D   time.Duration
	Set bool
}

type durationFlag struct {
	v        *DurationValue
	positive bool // 0 is refused
}

func (f durationFlag) String() string {
	if !f.v.Set {
		return ""
	}
	return f.v.D.String()
}
func (f durationFlag) Type() string { return "duration" }
func (f durationFlag) Set(s string) error {
	d, err := ops.ParseDuration(s)
	if err != nil {
		return err
	}
	if f.positive && d == 0 {
		return fmt.Errorf("a timeout of 0 would end at once; give a positive duration such as 30s")
	}
	f.v.D, f.v.Set = d, true
	return nil
}

// DurationFlag adds a flag taking 10m / 1h30m / 90s style durations.
func DurationFlag(fs *pflag.FlagSet, v *DurationValue, name, short, usage string) {
	fs.VarP(durationFlag{v: v}, name, short, usage)
}

type enumValue struct {
	target  *string
	allowed []string
}

func (e enumValue) String() string { return *e.target }
func (e enumValue) Type() string   { return "string" }
func (e enumValue) Set(s string) error {
	for _, a := range e.allowed {
		if strings.EqualFold(s, a) {
			*e.target = a
			return nil
		}
	}
	return fmt.Errorf("'%s' is not one of %s", s, quoteList(e.allowed))
}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, ", ")
}

// EnumFlag adds a flag whose value must be one of allowed (any case), and
// registers those values for shell completion.
func EnumFlag(cmd *cobra.Command, target *string, name, short, def string, allowed []string, usage string) {
	*target = def
	cmd.Flags().VarP(enumValue{target, allowed}, name, short, usage)
	_ = cmd.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return allowed, cobra.ShellCompDirectiveNoFileComp
	})
}

// PersistentEnumFlag is EnumFlag for a flag every subcommand inherits.
func PersistentEnumFlag(cmd *cobra.Command, target *string, name, def string, allowed []string, usage string) {
	*target = def
	cmd.PersistentFlags().Var(enumValue{target, allowed}, name, usage)
	_ = cmd.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return allowed, cobra.ShellCompDirectiveNoFileComp
	})
}
