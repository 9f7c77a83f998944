package ops

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/osb-dev/osb/internal/client"
)

// WithSandboxID runs op with id; if the server does not know that id, it
// looks for sandboxes whose id starts with it and, when exactly one does,
// runs op again with the full id. Two or more matches are a usage error
// that lists them. The common case, a full id, costs nothing extra.
func WithSandboxID(ctx context.Context, c *client.Client, id string, op func(id string) error) error {
	if strings.TrimSpace(id) == "" {
		return UsageErrorf("the sandbox id must not be empty")
	}
	err := op(id)
	if err == nil || !client.IsStatus(err, http.StatusNotFound) {
		return err
	}
	full, rerr := ResolveSandboxPrefix(ctx, c, id)
	if rerr != nil {
		return rerr
	}
	if full == "" || full == id {
		return err
	}
	return op(full)
}

// ResolveSandboxPrefix returns the one sandbox id starting with prefix, ""
// when none does, or a usage error naming every match.
func ResolveSandboxPrefix(ctx context.Context, c *client.Client, prefix string) (string, error) {
	var matches []string
	err := EachSandbox(ctx, c, client.ListSandboxesParams{}, func(sb client.Sandbox) error {
		if strings.HasPrefix(sb.ID, prefix) {
			matches = append(matches, sb.ID)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	switch len(matches) {
	case 0:
		return "", nil
	case 1:
		return matches[0], nil
	}
	slices.Sort(matches)
	return "", UsageErrorf("sandbox id prefix '%s' is ambiguous; it matches: %s", prefix, strings.Join(matches, ", "))
}

// EachSandbox walks every page of a listing, largest pages first.
func EachSandbox(ctx context.Context, c *client.Client, p client.ListSandboxesParams, fn func(client.Sandbox) error) error {
	return WalkSandboxes(ctx, c, p, c.ReadSandboxList, func(sb *client.Sandbox) string { return sb.ID },
		func(list *client.SandboxList) error {
			for _, sb := range list.Items {
				if err := fn(sb); err != nil {
					return err
				}
			}
			return nil
		})
}

// WalkSandboxes is EachSandbox a page at a time, over records of the
// caller's own: each page is read from the bytes the server sent by read
// (see client.WalkSandboxPages), and id names a record.
func WalkSandboxes[T any](ctx context.Context, c *client.Client, p client.ListSandboxesParams, read func([]byte) (*client.Page[T], error), id func(*T) string, fn func(*client.Page[T]) error) error {
	err := client.WalkSandboxPages(ctx, c, p, read, id, fn)
	var paging *client.PagingError
	if err != nil && !errors.As(err, &paging) {
		return fmt.Errorf("list sandboxes: %w", err)
	}
	return err
}
