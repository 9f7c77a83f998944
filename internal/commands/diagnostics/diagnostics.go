// Package diagnostics implements `osb diagnostics logs` and `osb
// diagnostics events`: the stable, scoped Diagnostics API.
package diagnostics

import (
	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdDiagnostics returns the `diagnostics` group.
func NewCmdDiagnostics(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("diagnostics", "Stable sandbox diagnostics: scoped logs and events.")
	cmd.Long = "Fetch a sandbox's diagnostic logs or events for a scope (--scope). The server\n" +
		"answers with the text inline or with a content URL; raw output (the default)\n" +
		"prints the text, or the content URL for URL-delivered diagnostics.\n\n" +
		"A server that does not implement scoped diagnostics (HTTP 501) is asked for\n" +
		"its legacy unscoped text instead, with a warning that the scope was not applied."
	cmd.AddCommand(
		newCmdFetch(f, fetchKind{
			kind:  client.DiagnosticLogs,
			title: "Diagnostic Logs",
			short: "Show a sandbox's diagnostic logs for a scope.",
			scopeHelp: "Diagnostic log scope. Built-in server scopes: container (the entrypoint's output)\n" +
				"and all; other scopes are server-defined.",
			example: "  osb diagnostics logs 3f2a --scope container\n  osb diagnostics logs 3f2a -s all -o json",
		}),
		newCmdFetch(f, fetchKind{
			kind:  client.DiagnosticEvents,
			title: "Diagnostic Events",
			short: "Show a sandbox's diagnostic events for a scope.",
			scopeHelp: "Diagnostic event scope. Built-in server scopes: runtime (the sandbox's state\n" +
				"changes with their times) and all; other scopes are server-defined.",
			example: "  osb diagnostics events 3f2a --scope runtime",
		}),
	)
	return cmd
}
