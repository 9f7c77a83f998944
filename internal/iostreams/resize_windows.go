package iostreams

import "time"

// WatchResize calls f with the terminal's new size after every resize,
// until stop is called. Windows consoles send no signal: the size is
// checked twice a second.
func (s *IOStreams) WatchResize(f func(cols, rows int)) (stop func()) {
	done := make(chan struct{})
	go func() {
		c0, r0, _ := s.TerminalSize()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if c, r, ok := s.TerminalSize(); ok && (c != c0 || r != r0) {
					c0, r0 = c, r
					f(c, r)
				}
			}
		}
	}()
	return func() { close(done) }
}
