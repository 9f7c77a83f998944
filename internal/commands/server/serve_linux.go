package server

import (
	"context"
	"io"

	"github.com/osb-dev/osb/internal/server"
)

func serve(ctx context.Context, s settings, stderr io.Writer) error {
	return server.Run(ctx, server.Options{
		Listen:  s.listen,
		APIKey:  s.apiKey,
		DataDir: s.dataDir,
		Log:     stderr,
	}, stderr)
}
