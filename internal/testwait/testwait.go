// Package testwait holds the waits tests share that need nothing of osb,
// so that any package's internal tests can use them.
package testwait

import (
	"testing"
	"time"
)

// Finishes runs f and fails the test if it has not returned in a minute:
// f would otherwise hang the test until the go test timeout. what names f
// in the failure.
func Finishes(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not finish within a minute", what)
	}
}
