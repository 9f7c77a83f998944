package cmdutil

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
)

// CompletionLister offers candidates to add as it walks a server listing.
type CompletionLister func(ctx context.Context, c *client.Client, add func(cobra.Completion)) error

// CompleteListed completes the first argument from a server listing, with
// the rules of CompleteSandboxIDs: a short budget, a listing cut short still
// offers what it found, and any failure gives no candidates and no message.
func CompleteListed(f *Factory, list CompletionLister) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return listed(cmd, f, list, toComplete, nil), cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteListedFlag completes a flag's value (an id) from a server listing,
// with the same rules, whatever arguments the line already has.
func CompleteListedFlag(f *Factory, list CompletionLister) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return listed(cmd, f, list, toComplete, nil), cobra.ShellCompDirectiveNoFileComp
	}
}

// SnapshotCandidates lists snapshots as "id<TAB>state name".
func SnapshotCandidates(ctx context.Context, c *client.Client, add func(cobra.Completion)) error {
	fetch := func(ctx context.Context, page int) (*client.SnapshotList, error) {
		return c.ListSnapshots(ctx, client.ListSnapshotsParams{Page: page, PageSize: client.MaxPageSize})
	}
	return client.WalkPages(ctx, fetch, func(s *client.Snapshot) string { return s.ID }, func(list *client.SnapshotList) error {
		for _, s := range list.Items {
			desc := s.Status.State
			if s.Name != nil {
				desc += " " + *s.Name
			}
			add(cobra.CompletionWithDesc(s.ID, desc))
		}
		return nil
	})
}

// TemplateCandidates lists templates as "id<TAB>phase image".
func TemplateCandidates(ctx context.Context, c *client.Client, add func(cobra.Completion)) error {
	fetch := func(ctx context.Context, page int) (*client.TemplateList, error) {
		return c.ListTemplates(ctx, client.ListTemplatesParams{Page: page, PageSize: client.MaxPageSize})
	}
	return client.WalkPages(ctx, fetch, func(t *client.Template) string { return t.TemplateID }, func(list *client.TemplateList) error {
		for _, t := range list.Items {
			add(cobra.CompletionWithDesc(t.TemplateID, strings.TrimSpace(t.Status.Phase+" "+t.Image)))
		}
		return nil
	})
}
