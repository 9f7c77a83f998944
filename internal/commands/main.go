package commands

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/iostreams"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

// Main runs osb as a program: real streams, real environment, signals.
func Main() int {
	ctx, stop := ops.NotifySignals(context.Background())
	defer stop()
	return Run(ctx, cmdutil.New(iostreams.System(), os.Getenv), os.Args[1:])
}

// Run executes one command line over f and returns the exit code. Tests call
// it in-process with buffered streams.
func Run(ctx context.Context, f *cmdutil.Factory, args []string) int {
	return run(ctx, f, newRunRoot(f, args), args)
}

func run(ctx context.Context, f *cmdutil.Factory, root *cobra.Command, args []string) int {
	root.SetArgs(args)
	root.SetIn(f.IOStreams.In)
	root.SetOut(f.IOStreams.Out)
	root.SetErr(f.IOStreams.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ops.ExitOK
	}
	err = usageFromCobra(err)
	code := ops.ExitCode(err)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		fmt.Fprintln(f.IOStreams.ErrOut, "Aborted.")
		return ops.InterruptedCode(ctx)
	}
	var exitErr *ops.ExitError
	if errors.As(err, &exitErr) && exitErr.Err == nil {
		return code
	}
	renderError(f.IOStreams, cmdutil.FormatOf(cmd, args), err, code, cmd, nextStep(f, err))
	return code
}

// usageFromCobra marks as usage errors the validation errors cobra returns
// as plain text past every hook: required flags and flag groups, checked
// after the command's pre-run. Flag parsing errors already come through
// SetFlagErrorFunc and argument errors through markArgErrors.
func usageFromCobra(err error) error {
	var flagErr *ops.FlagError
	if errors.As(err, &flagErr) {
		return err
	}
	msg := err.Error()
	for _, prefix := range []string{"required flag", "if any flags in the group", "at least one of the flags"} {
		if strings.HasPrefix(msg, prefix) {
			return &ops.FlagError{Err: err}
		}
	}
	return err
}

// renderError writes err to stderr: one line of text, or an object under
// -o json / -o yaml so that a script can parse it.
func renderError(ios *iostreams.IOStreams, format string, err error, code int, cmd *cobra.Command, next string) {
	if format == output.JSONF || format == output.YAMLF {
		obj := output.Obj{{Key: "status", Value: "error"}, {Key: "message", Value: err.Error()}, {Key: "exit_code", Value: code}}
		var apiErr *client.APIError
		if errors.As(err, &apiErr) {
			obj = append(obj,
				output.KV{Key: "http_status", Value: apiErr.Status},
				output.KV{Key: "code", Value: nilIfEmpty(apiErr.Code)},
				output.KV{Key: "request_id", Value: nilIfEmpty(apiErr.RequestID)})
		}
		var b []byte
		if format == output.JSONF {
			b, _ = output.JSON(obj)
		} else {
			b, _ = output.YAML(obj)
		}
		ios.ErrOut.Write(b)
		return
	}
	msg := err.Error()
	var flagErr *ops.FlagError
	if errors.As(err, &flagErr) && cmd != nil {
		msg += fmt.Sprintf(" (see '%s --help')", cmd.CommandPath())
	}
	if code == ops.ExitAuth {
		msg += "; check the API key (--api-key, OPEN_SANDBOX_API_KEY or connection.api_key)"
	}
	switch {
	case client.IsStatus(err, http.StatusTooManyRequests):
		msg += "; the server is rate limiting requests"
	case client.IsStatus(err, http.StatusRequestEntityTooLarge):
		msg += "; the request is larger than the server (or a proxy before it) accepts"
	}
	msg += next
	output.WriteError(ios, msg)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nextStep is what to do about err, when there is something: the listing
// that shows what exists after a not-found, the local server when nothing
// listens where osb looks for the lifecycle API.
func nextStep(f *cmdutil.Factory, err error) string {
	var apiErr *client.APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		for _, kind := range [][2]string{{"sandbox", "sandboxes"}, {"snapshot", "snapshots"}, {"template", "templates"}} {
			if strings.Contains(strings.ToUpper(apiErr.Code), strings.ToUpper(kind[0])) {
				return fmt.Sprintf("; 'osb %s list' shows the %s there are", kind[0], kind[1])
			}
		}
		return ""
	}
	var connErr *client.ConnError
	if !errors.As(err, &connErr) || !errors.Is(err, syscall.ECONNREFUSED) {
		return ""
	}
	cfg, cerr := f.Config()
	if cerr != nil {
		return ""
	}
	domain := cfg.EffectiveDomain()
	host, _, _ := strings.Cut(domain, "/")
	if strings.Contains(domain, "://") {
		if du, derr := url.Parse(domain); derr == nil {
			host = du.Host
		}
	}
	u, perr := url.Parse(connErr.URL)
	if perr != nil || u.Host != host {
		return "" // a sandbox's endpoint, not the server
	}
	// The host from the URL: the domain may hold a password.
	return fmt.Sprintf("; is a server running at %s? 'osb server' starts a local one, and --domain (OPEN_SANDBOX_DOMAIN) says where osb looks", u.Host)
}
