package server

import (
	"context"
	"io"

	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/image"
)

func serve(ctx context.Context, s settings, stderr io.Writer) error {
	opts := server.Options{
		Listen:  s.listen,
		APIKey:  s.apiKey,
		DataDir: s.dataDir,
		Log:     stderr,
		// Run refuses to start without isolation unless this says so.
		NoIsolation:       s.unsafeNoIsolation,
		AcceptNoIsolation: s.unsafeNoIsolation,
		AllowUnlimited:    s.allowUnlimited,
		AllowHostPaths:    s.allowHostPaths,
	}
	if !s.hostPrograms {
		opts.Images = &image.Options{ImageDir: s.imageDir}
		opts.HostProgramsOffline = !s.strictImages
	}
	if s.ready != nil {
		opts.Ready = s.ready
	}
	return server.Run(ctx, opts, stderr)
}
