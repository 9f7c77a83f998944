package cmdtest

import (
	"bytes"
	"sync"
)

// SyncBuffer is a buffer that goroutines may write while the test reads it:
// a server log, or the stderr of a command still running.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
