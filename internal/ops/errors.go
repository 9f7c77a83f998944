package ops

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/output"
)

// Exit codes; `osb help exit-codes` documents them.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitAuth        = 3
	ExitNotFound    = 4
	ExitTimeout     = 5
	ExitUnreachable = 6
	// Foreground remote commands.
	ExitRemoteTimeout = 124
	ExitOsbFailed     = 125
	ExitInterrupted   = 130
)

// FlagError is bad command-line input found while parsing: exit 2.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf builds a FlagError.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ExitError ends the command with Code. With a nil Err nothing more is printed.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// UsageErrorf is invalid input found after parsing but before any request: exit 2.
func UsageErrorf(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// Silent ends the command with code and prints nothing more.
func Silent(code int) error { return &ExitError{Code: code} }

// ExitCode maps an error to the documented exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var exitErr *ExitError
	var flagErr *FlagError
	var apiErr *client.APIError
	var timeoutErr *client.TimeoutError
	var connErr *client.ConnError
	var queryErr *output.QueryError
	switch {
	case errors.As(err, &exitErr):
		return exitErr.Code
	case errors.As(err, &flagErr), errors.As(err, &queryErr):
		return ExitUsage
	case errors.As(err, &apiErr):
		return apiExitCode(apiErr.Status)
	case errors.As(err, &timeoutErr), errors.Is(err, context.DeadlineExceeded):
		return ExitTimeout
	case errors.As(err, &connErr):
		return ExitUnreachable
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitFailure
}

func apiExitCode(status int) int {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return ExitAuth
	case http.StatusNotFound:
		return ExitNotFound
	}
	return ExitFailure
}
