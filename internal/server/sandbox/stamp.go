package sandbox

import (
	"bufio"
	"errors"
	"os"
	"time"
)

// stampFormat is how Docker stamps a line of container output in its logs
// (docker logs --timestamps), which the real server hands out as a
// sandbox's logs.
const stampFormat = "2006-01-02T15:04:05.000000000Z"

// stampLines returns the write end of a pipe for a sandbox's processes and
// copies what they write into log, each line preceded by the time it came,
// as the real server's logs show a container's output. A line longer than
// the reader's buffer is cut into stamped pieces, as Docker cuts its own.
// done is closed once every writer has closed the pipe and all is copied.
func stampLines(log *os.File) (w *os.File, done <-chan struct{}, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		defer r.Close()
		br := bufio.NewReaderSize(r, 16<<10)
		for {
			line, err := br.ReadSlice('\n')
			if len(line) > 0 {
				out := time.Now().UTC().AppendFormat(make([]byte, 0, len(stampFormat)+1+len(line)), stampFormat)
				out = append(append(out, ' '), line...)
				if _, werr := log.Write(out); werr != nil {
					return // the sandbox is being removed
				}
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return
			}
		}
	}()
	return w, copied, nil
}
