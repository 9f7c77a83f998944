//go:build linux

package sandbox

import (
	"context"
	"os"
	"testing"
	"time"
)

// A command running when the sandbox is paused finishes once it is resumed,
// and its waiter sees it end (in namespaces, nsenter had stopped too).
func TestCommandFinishesAfterResume(t *testing.T) {
	modes(t, func(t *testing.T, isolated bool) {
		s := start(t, isolated)
		cmd, err := s.Command(context.Background(), CommandSpec{Shell: "while [ ! -e gate ]; do sleep 0.02; done"})
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
		if err := s.Resume(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.hostPath("/workspace/gate"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("command: %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("the command never ended after the resume")
		}
	})
}
