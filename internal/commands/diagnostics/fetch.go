package diagnostics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

// fetchKind is what differs between `logs` and `events`.
type fetchKind struct {
	kind      string // client.DiagnosticLogs or client.DiagnosticEvents
	title     string
	short     string
	scopeHelp string
	example   string
}

type fetchOptions struct {
	cmdutil.Base
	kind    fetchKind
	Sandbox cmdutil.Sandbox
	Scope   string
}

// maxLegacyText bounds what the 501 fallback reads: it becomes one inline
// descriptor in memory.
const maxLegacyText = 16 << 20

// diagnosticFormats print the text by default, or the descriptor.
var diagnosticFormats = &cmdutil.Formats{
	Allowed: []string{output.Table, output.JSONF, output.YAMLF, output.Raw}, Default: output.Raw,
	Usage: "Output format: table, json, yaml, raw. raw prints inline text, or the content URL for URL-delivered diagnostics.",
}

func newCmdFetch(f *cmdutil.Factory, k fetchKind) *cobra.Command {
	opts := &fetchOptions{kind: k}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[fetchOptions]{
		Name:  k.kind,
		Short: k.short,
		Long: k.short + " SANDBOX_ID may be any unique prefix of the id.\n\n" +
			"raw output prints the text (warnings about it go to stderr), or the content URL\n" +
			"when the server delivers it by URL; table, json and yaml show the descriptor.",
		Example: k.example,
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: diagnosticFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVarP(&opts.Scope, "scope", "s", "", k.scopeHelp)
			fs.Required("scope")
		},
		Run: runFetch,
	})
}

func runFetch(ctx context.Context, opts *fetchOptions) error {
	if strings.TrimSpace(opts.Scope) == "" {
		return ops.UsageErrorf("--scope must not be empty")
	}
	var d *client.Diagnostic
	err := opts.Sandbox.Do(ctx, func(c *client.Client, id string) error {
		var err error
		d, err = c.GetDiagnostic(ctx, id, opts.kind.kind, opts.Scope)
		if client.IsStatus(err, http.StatusNotImplemented) {
			d, err = legacyFallback(ctx, c, id, opts.kind.kind, opts.Scope)
		}
		return err
	})
	if err != nil {
		return err
	}
	return render(opts.Printer(), opts.kind.title, d)
}

// legacyFallback asks a server without the scoped API (HTTP 501) for its
// legacy unscoped text, and presents it as an inline descriptor whose
// warning says the scope was not applied.
func legacyFallback(ctx context.Context, c *client.Client, id, kind, scope string) (*client.Diagnostic, error) {
	body, err := c.LegacyDiagnostic(ctx, id, kind, nil)
	if err != nil {
		return nil, fmt.Errorf("the server does not implement scoped diagnostics (HTTP 501) and its legacy %s route failed: %w", kind, err)
	}
	defer body.Close()
	raw, err := io.ReadAll(io.LimitReader(body, maxLegacyText+1))
	if err != nil {
		return nil, fmt.Errorf("reading the legacy %s text: %w", kind, err)
	}
	text := string(raw[:min(len(raw), maxLegacyText)])
	n := int64(len(text))
	return &client.Diagnostic{
		SandboxID: id, Kind: kind, Scope: scope, Delivery: client.DeliveryInline,
		ContentType: "text/plain", Content: &text, ContentLength: &n, Truncated: len(raw) > maxLegacyText,
		Warnings: []string{fmt.Sprintf("the server does not implement scoped diagnostics (HTTP 501); "+
			"showing its legacy unscoped %s text, so scope '%s' was not applied", kind, scope)},
	}, nil
}

// diagnosticView is the descriptor as osb prints it: the official client's
// snake_case keys, every key present (null when unset).
type diagnosticView struct {
	SandboxID     string       `json:"sandbox_id"`
	Kind          string       `json:"kind"`
	Scope         string       `json:"scope"`
	Delivery      string       `json:"delivery"`
	ContentType   string       `json:"content_type"`
	Truncated     bool         `json:"truncated"`
	Content       *string      `json:"content"`
	ContentURL    *string      `json:"content_url"`
	ContentLength *int64       `json:"content_length"`
	ExpiresAt     *client.Time `json:"expires_at"`
	Warnings      []string     `json:"warnings"`
}

func render(p *output.Printer, title string, d *client.Diagnostic) error {
	if p.Format != output.Raw {
		return p.Object(title, diagnosticView{
			SandboxID: d.SandboxID, Kind: d.Kind, Scope: d.Scope, Delivery: d.Delivery, ContentType: d.ContentType,
			Truncated: d.Truncated, Content: d.Content, ContentURL: d.ContentURL, ContentLength: d.ContentLength,
			ExpiresAt: d.ExpiresAt, Warnings: d.Warnings,
		})
	}
	if d.Truncated {
		p.Warning("diagnostic content was truncated.")
	}
	for _, w := range d.Warnings {
		p.Warning(w)
	}
	switch {
	case d.Delivery == client.DeliveryInline:
		text := ""
		if d.Content != nil {
			text = *d.Content
		}
		return writeText(p.IO.Out, text)
	case d.ContentURL != nil && *d.ContentURL != "":
		return p.Text(*d.ContentURL)
	}
	return errors.New("Diagnostic response did not include inline content or a content URL.")
}

// writeText prints text as it is, ending it with a newline when it lacks one.
func writeText(w io.Writer, text string) error {
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err := io.WriteString(w, text)
	return err
}
