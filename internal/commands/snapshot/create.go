package snapshot

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

type createOptions struct {
	cmdutil.Base
	Sandbox     cmdutil.Sandbox
	Name        string
	NameSet     bool
	Wait        bool
	WaitTimeout cmdutil.DurationValue
}

const (
	defaultWaitTimeout = 10 * time.Minute
	// waitPoll is how often --wait asks for the snapshot's state.
	waitPoll = 500 * time.Millisecond
)

func newCmdCreate(f *cmdutil.Factory) *cobra.Command {
	opts := &createOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[createOptions]{
		Name:  "create",
		Short: "Snapshot a running sandbox.",
		Long: "Ask the server for a snapshot of a running sandbox. SANDBOX_ID may be any\n" +
			"unique prefix of the id. The snapshot is taken asynchronously: it starts\n" +
			"Creating; --wait polls until it is Ready (exit 0) or Failed (exit 1), for at\n" +
			"most --wait-timeout (default 10m; running out of time is exit 5).",
		Example: "  osb snapshot create 3f2a --name before-upgrade --wait\n" +
			"  osb snapshot create 3f2a --wait-timeout 30m -o json",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.TableFormats,
		Prints:  createdView{},
		Flags: func(fs *cmdutil.FlagSet) {
			fs.StringVar(&opts.Name, "name", "", "Name for the snapshot.")
			fs.Given("name", &opts.NameSet)
			fs.BoolVar(&opts.Wait, "wait", false, "Wait until the snapshot is Ready or Failed.")
			fs.Duration(&opts.WaitTimeout, "wait-timeout", "", "How long --wait waits, e.g. 10m (implies --wait; default 10m).")
		},
		Run: runCreate,
	})
}

func runCreate(ctx context.Context, opts *createOptions) error {
	if opts.NameSet && opts.Name == "" {
		return ops.UsageErrorf("--name must not be empty")
	}
	if opts.WaitTimeout.Set && opts.WaitTimeout.D <= 0 {
		return ops.UsageErrorf("--wait-timeout must be more than 0")
	}
	var snap *client.Snapshot
	var c *client.Client
	err := opts.Sandbox.Do(ctx, func(cl *client.Client, id string) error {
		var err error
		c = cl
		snap, err = c.CreateSnapshot(ctx, id, opts.Name)
		return err
	})
	if err != nil {
		return err
	}
	var waitErr error
	if opts.Wait || opts.WaitTimeout.Set {
		timeout := defaultWaitTimeout
		if opts.WaitTimeout.Set {
			timeout = opts.WaitTimeout.D
		}
		snap, waitErr = waitSettled(ctx, c, snap, timeout)
	}
	// The snapshot exists whatever the wait gave: its id is printed either way.
	v := createdView{ID: snap.ID, SandboxID: snap.SandboxID, Name: snap.Name, Status: snap.Status.State}
	if err := opts.Printer().Panel("Snapshot Created", v); err != nil {
		return err
	}
	return waitErr
}

// waitSettled polls until the snapshot is Ready (nil error) or Failed (exit
// 1), for at most timeout (exit 5). It returns the last state it saw.
func waitSettled(ctx context.Context, c *client.Client, snap *client.Snapshot, timeout time.Duration) (*client.Snapshot, error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	for {
		switch snap.Status.State {
		case client.SnapshotReady:
			return snap, nil
		case client.SnapshotFailed:
			msg := "no reason given"
			if m := snap.Status.Message; m != nil && *m != "" {
				msg = *m
			}
			return snap, &ops.ExitError{Code: ops.ExitFailure, Err: fmt.Errorf("snapshot %s failed: %s", snap.ID, msg)}
		}
		select {
		case <-tick.C:
		case <-wctx.Done():
			if ctx.Err() != nil {
				return snap, ctx.Err()
			}
			return snap, &ops.ExitError{Code: ops.ExitTimeout,
				Err: fmt.Errorf("snapshot %s was not Ready within %s (it is %s)", snap.ID, timeout, snap.Status.State)}
		}
		next, err := c.GetSnapshot(wctx, snap.ID)
		switch {
		case err == nil:
			snap = next
		case wctx.Err() == nil:
			return snap, err
		}
	}
}
