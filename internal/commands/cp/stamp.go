package cp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/osb-dev/osb/internal/client"
)

// stamp is a remote path and the modification time it is to have.
type stamp struct {
	path string
	mod  time.Time
}

// maxStampScript bounds one touch script: the shell gets it as a single
// argument, which Linux caps at 128 KiB.
const maxStampScript = 64 << 10

// stampRemote gives remote paths their modification times, in the order
// given (a directory after everything written into it), with touch in the
// sandbox: execd's files API carries no times, and without this every file
// it writes is dated now, so make sees nothing older than its outputs.
func stampRemote(ctx context.Context, dp *client.DataPlane, stamps []stamp) error {
	var b strings.Builder
	run := func() error {
		if b.Len() == 0 {
			return nil
		}
		_, err := runScript(ctx, dp, b.String())
		b.Reset()
		if err != nil {
			return fmt.Errorf("cannot set the modification times in the sandbox: %w", err)
		}
		return nil
	}
	for _, s := range stamps {
		if s.mod.IsZero() {
			continue
		}
		line := fmt.Sprintf("touch -c -m -d @%d.%09d -- %s || exit 1\n", s.mod.Unix(), s.mod.Nanosecond(), shellQuote(s.path))
		if b.Len()+len(line) > maxStampScript {
			if err := run(); err != nil {
				return err
			}
		}
		b.WriteString(line)
	}
	return run()
}

// stampLocal gives a local file or directory its modification time (the
// access time is left alone); a zero time, which the server did not say,
// leaves it as it is.
func stampLocal(p string, mod time.Time) error {
	if mod.IsZero() {
		return nil
	}
	return os.Chtimes(p, time.Time{}, mod)
}

// trailerReader remembers the last two blocks a tar reader took, so that
// the end it reports can be told from a stream cut between two entries:
// archive/tar takes both for a clean end of input. A whole archive ends
// with two blocks of zeros.
type trailerReader struct {
	r    io.Reader
	tail [1024]byte
	n    int64 // bytes read so far
}

func (t *trailerReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n >= len(t.tail) {
		copy(t.tail[:], p[n-len(t.tail):n])
	} else if n > 0 {
		copy(t.tail[:], t.tail[n:])
		copy(t.tail[len(t.tail)-n:], p[:n])
	}
	t.n += int64(n)
	return n, err
}

// cutShort is the error for a stream that ended without them.
func (t *trailerReader) cutShort() error {
	if t.n == 0 {
		return errEmptyTar
	}
	return errNoTrailer
}

// ended reports whether what was read ends with the two zero blocks.
func (t *trailerReader) ended() bool {
	return t.n >= int64(len(t.tail)) && bytes.Count(t.tail[:], []byte{0}) == len(t.tail)
}

// errEmptyTar is a tar stream with nothing in it at all: most often the
// tar before the pipe failed (its message is above).
var errEmptyTar = fmt.Errorf("the tar stream is empty")

// errNoTrailer is a tar stream that stopped between two entries, without
// the end-of-archive blocks: a writer that died, a connection that broke.
var errNoTrailer = fmt.Errorf("the tar stream ended without its end-of-archive blocks: it was cut short")
