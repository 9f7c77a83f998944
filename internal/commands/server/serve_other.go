//go:build !linux

package server

import (
	"context"
	"errors"
	"io"
)

// The local server runs sandboxes as Linux process trees in Linux
// namespaces; elsewhere osb is a client only.
func serve(context.Context, settings, io.Writer) error {
	return errors.New("osb server runs on Linux only; point osb at a server with --domain")
}
