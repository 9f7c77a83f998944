//go:build !linux

package execd

import "net/http"

// PTY sessions need Linux's pseudo-terminals and process groups; elsewhere
// execd has no /pty routes (osb server runs on Linux only).
func (rn *runner) ptyRoutes(*http.ServeMux) {}
