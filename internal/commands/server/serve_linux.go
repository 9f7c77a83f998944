package server

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/image"
)

func serve(ctx context.Context, s settings, stderr io.Writer) error {
	// Go ends a program whose write to stdout or stderr meets a closed
	// pipe. Under 'osb server 2>&1 | tee log', Ctrl-C ends tee too, and the
	// first line of the shutdown would kill the server before it removed
	// its sandboxes and data dir. Caught (not ignored, which sandbox
	// processes would inherit), SIGPIPE only makes such writes fail.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	opts := server.Options{
		Listen:  s.listen,
		APIKey:  s.apiKey,
		DataDir: s.dataDir,
		Log:     stderr,
		// Run refuses to start without isolation unless this says so.
		NoIsolation:       s.unsafeNoIsolation,
		AcceptNoIsolation: s.unsafeNoIsolation,
		AllowUnlimited:    s.allowUnlimited,
		NoSpare:           s.noSpare,
		AllowHostPaths:    s.allowHostPaths,
	}
	if !s.hostPrograms {
		opts.Images = &image.Options{ImageDir: s.imageDir}
	}
	if s.ready != nil {
		opts.Ready = s.ready
	}
	return server.Run(ctx, opts, stderr)
}
