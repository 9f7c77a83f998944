package cmdutil

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/ops"
)

// Resource is a kind of server object named by an id, such as a template or
// a snapshot: its get and delete verbs differ only in what is declared
// here. W is the wire type, V the view printed.
type Resource[W, V any] struct {
	Noun   string            // "snapshot", in messages
	Title  string            // "Snapshot", in table titles
	Arg    func(*string) Arg // its id argument, e.g. SnapshotArg
	Get    func(ctx context.Context, c *client.Client, id string) (*W, error)
	Delete func(ctx context.Context, c *client.Client, id string) error
	View   func(*W) V
}

type idOptions struct {
	Base
	ID string
}

// GetVerb shows one object as a record.
func (r Resource[W, V]) GetVerb(f *Factory, short string) *cobra.Command {
	return r.verb(f, Verb[idOptions]{Name: "get", Short: short}, func(ctx context.Context, c *client.Client, opts *idOptions) error {
		w, err := r.Get(ctx, c, opts.ID)
		if err != nil {
			return err
		}
		return opts.Printer().Object(r.Title+" Info", r.View(w))
	})
}

// DeleteVerb deletes one object and says so.
func (r Resource[W, V]) DeleteVerb(f *Factory, short string) *cobra.Command {
	return r.verb(f, Verb[idOptions]{Name: "delete", Aliases: []string{"rm"}, Short: short}, func(ctx context.Context, c *client.Client, opts *idOptions) error {
		if err := r.Delete(ctx, c, opts.ID); err != nil {
			return err
		}
		return opts.Printer().Success(r.Title + " deleted: " + opts.ID)
	})
}

// verb declares a verb on the object its id names.
func (r Resource[W, V]) verb(f *Factory, v Verb[idOptions], do func(context.Context, *client.Client, *idOptions) error) *cobra.Command {
	opts := &idOptions{}
	v.Args = []Arg{r.Arg(&opts.ID)}
	v.Formats = TableFormats
	v.Run = func(ctx context.Context, opts *idOptions) error {
		c, err := opts.Client()
		if err != nil {
			return err
		}
		return do(ctx, c, opts)
	}
	return NewVerb(f, opts, v)
}

// PageFlags are --page and --page-size of a list verb.
type PageFlags struct {
	Page, PageSize       int
	PageSet, PageSizeSet bool // given: 0 is then an error
}

// Add declares the flags; noun names what a page holds ("Templates").
func (p *PageFlags) Add(fs *FlagSet, noun string) {
	fs.IntVar(&p.Page, "page", 0, "Page number, from 1.")
	fs.Given("page", &p.PageSet)
	fs.IntVar(&p.PageSize, "page-size", 0, noun+" per page, at least 1 (the server allows at most 200).")
	fs.Given("page-size", &p.PageSizeSet)
}

// Check rejects values below 1 that were given, before any request.
func (p *PageFlags) Check() error {
	return ops.CheckPageFlags(p.PageSet, p.Page, p.PageSizeSet, p.PageSize)
}
