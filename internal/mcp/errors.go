package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osb-dev/osb/internal/cmdutil"
)

// toolFailure is the structured content of a failed tool call: the
// message, and the exit code osb would have ended with for the same error
// on the command line, with its name.
type toolFailure struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
	Kind     string `json:"kind"`
}

// kinds names the exit codes a tool error can carry (`osb help exit-codes`).
var kinds = map[int]string{
	cmdutil.ExitFailure:     "error",
	cmdutil.ExitUsage:       "usage",
	cmdutil.ExitAuth:        "auth",
	cmdutil.ExitNotFound:    "not_found",
	cmdutil.ExitTimeout:     "timeout",
	cmdutil.ExitUnreachable: "unreachable",
	cmdutil.ExitInterrupted: "interrupted",
}

// handlerError marks an error returned by one of our tool handlers; any
// other failed call was refused by the SDK before it reached us, for
// arguments that do not fit the schema.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }
func (e *handlerError) Unwrap() error { return e.err }

// usage is a bad argument found before any request was sent.
func usage(format string, a ...any) error { return cmdutil.UsageErrorf(format, a...) }

func failureOf(err error) toolFailure {
	code := cmdutil.ExitUsage
	var herr *handlerError
	if errors.As(err, &herr) {
		code = cmdutil.ExitCode(herr.err)
	}
	kind, ok := kinds[code]
	if !ok {
		code, kind = cmdutil.ExitFailure, kinds[cmdutil.ExitFailure]
	}
	return toolFailure{Error: err.Error(), ExitCode: code, Kind: kind}
}

// describeErrors gives every failed tool call its exit-code meaning, in the
// text an agent reads and in structured content a program can test.
func describeErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !r.IsError || r.GetError() == nil {
			return res, err
		}
		f := failureOf(r.GetError())
		r.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s (exit code %d: %s)", f.Error, f.ExitCode, f.Kind)}}
		r.StructuredContent = f
		return r, nil
	}
}
