package cmdutil

import (
	"context"
	"github.com/osb-dev/osb/internal/ops"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
)

// completionBudget bounds how long a shell waits for id suggestions: a
// slow or absent server must not freeze the user's Tab key.
const completionBudget = 2 * time.Second

// completionContext is the command's context bounded by the completion
// budget: Factory.CompletionBudget when set, else completionBudget.
func completionContext(cmd *cobra.Command, f *Factory) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	budget := f.CompletionBudget
	if budget == 0 {
		budget = completionBudget
	}
	return context.WithTimeout(ctx, budget)
}

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
		return listed(cmd, f, SandboxCandidates, toComplete, args), cobra.ShellCompDirectiveNoFileComp
	}
}

// SandboxCandidates lists sandboxes as "id<TAB>state", every page.
func SandboxCandidates(ctx context.Context, c *client.Client, add func(cobra.Completion)) error {
	return ops.EachSandbox(ctx, c, client.ListSandboxesParams{}, func(sb client.Sandbox) error {
		add(cobra.CompletionWithDesc(sb.ID, sb.Status.State))
		return nil
	})
}

// listed walks a server listing within the budget and keeps the candidates
// whose id starts with prefix and is not in exclude. A listing cut short
// (by the budget or an error) still offers what it found; a client that
// cannot be built offers nothing.
func listed(cmd *cobra.Command, f *Factory, list CompletionLister, prefix string, exclude []string) []cobra.Completion {
	c, err := f.Client()
	if err != nil {
		return nil
	}
	ctx, cancel := completionContext(cmd, f)
	defer cancel()
	var out []cobra.Completion
	_ = list(ctx, c, func(comp cobra.Completion) {
		id, _, _ := strings.Cut(comp, "\t")
		if strings.HasPrefix(id, prefix) && !slices.Contains(exclude, id) {
			out = append(out, comp)
		}
	})
	slices.Sort(out)
	return out
}
