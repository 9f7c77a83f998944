package cmdutil

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
)

// completionBudget bounds how long a shell waits for id suggestions: a
// slow or absent server must not freeze the user's Tab key.
const completionBudget = 2 * time.Second

// CompleteSandboxIDs suggests sandbox ids starting with what was typed, each
// described by its state. Only the first argument is completed unless many
// is set (commands taking several ids), and ids already given are left out.
// Any failure (no config, no server, bad key) yields no suggestions and no
// message: completion must stay quiet.
func CompleteSandboxIDs(f *Factory, many bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 && !many {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		return sandboxCompletions(ctx, f, toComplete, args), cobra.ShellCompDirectiveNoFileComp
	}
}

func sandboxCompletions(ctx context.Context, f *Factory, prefix string, exclude []string) []cobra.Completion {
	c, err := f.Client()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, completionBudget)
	defer cancel()
	var out []cobra.Completion
	// A listing cut short by the budget still offers what it found.
	_ = EachSandbox(ctx, c, client.ListSandboxesParams{}, func(sb client.Sandbox) error {
		if strings.HasPrefix(sb.ID, prefix) && !slices.Contains(exclude, sb.ID) {
			out = append(out, cobra.CompletionWithDesc(sb.ID, sb.Status.State))
		}
		return nil
	})
	slices.Sort(out)
	return out
}
