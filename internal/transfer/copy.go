package transfer

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// bufSize is large enough that a fast local transfer is not held back by
// system calls, and small enough that memory never matters.
const bufSize = 256 << 10

// ShortError is a transfer that ended before the size the server announced.
type ShortError struct {
	Got, Want int64
}

func (e *ShortError) Error() string {
	return fmt.Sprintf("the connection ended after %d of %d bytes", e.Got, e.Want)
}

// buffers are Copy's: a tree of small files makes one copy a file, and a
// buffer made for each would cost more than the file.
var buffers = sync.Pool{New: func() any { return new([bufSize]byte) }}

// Copy copies src to dst and, when want is not negative, checks that
// exactly want bytes came.
func Copy(dst io.Writer, src io.Reader, want int64) (int64, error) {
	buf := buffers.Get().(*[bufSize]byte)
	defer buffers.Put(buf)
	n, err := io.CopyBuffer(dst, src, buf[:])
	if errors.Is(err, io.ErrUnexpectedEOF) && want >= 0 {
		return n, &ShortError{Got: n, Want: want}
	}
	if err != nil {
		return n, err
	}
	if want >= 0 && n != want {
		return n, &ShortError{Got: n, Want: want}
	}
	return n, nil
}
