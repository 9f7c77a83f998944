package server

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// logger serialises lines to the configured writer, which may not be safe
// for concurrent use.
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func newLogger(w io.Writer) *logger { return &logger{w: w} }

func (l *logger) printf(format string, args ...any) {
	if l.w == nil {
		return
	}
	line := time.Now().UTC().Format("2006-01-02T15:04:05.000Z ") + fmt.Sprintf(format, args...) + "\n"
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, line)
}

func (l *logger) request(method, path string, status int, d time.Duration, rid string) {
	l.printf("%s %s %d %s rid=%s", method, path, status, d.Round(time.Microsecond), rid)
}

func (l *logger) event(format string, args ...any) { l.printf(format, args...) }
