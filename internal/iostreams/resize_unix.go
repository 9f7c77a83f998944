//go:build !windows

package iostreams

import (
	"os"
	"os/signal"
	"syscall"
)

// WatchResize calls f with the terminal's new size after every resize
// (SIGWINCH), until stop is called.
func (s *IOStreams) WatchResize(f func(cols, rows int)) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ch:
				if c, r, ok := s.TerminalSize(); ok {
					f(c, r)
				}
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}
