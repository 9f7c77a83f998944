//go:build linux

package execd

// replayLimit is how much of a PTY session's output is kept for clients
// that reconnect: 1 MiB, as on execd.
const replayLimit = 1 << 20

// replayRing keeps the last bytes of a session's output. Offsets count
// every byte ever written, so a client can say where it stopped reading
// and get exactly what came after, as long as it is still held.
type replayRing struct {
	buf   []byte // allocated on first write; a session that prints nothing costs nothing
	limit int
	total int64 // bytes ever written; byte n lives at buf[n%limit] while held
}

func newReplayRing(limit int) *replayRing { return &replayRing{limit: limit} }

func (r *replayRing) write(p []byte) {
	if len(p) == 0 {
		return
	}
	if r.buf == nil {
		r.buf = make([]byte, r.limit)
	}
	if len(p) > r.limit {
		r.total += int64(len(p) - r.limit)
		p = p[len(p)-r.limit:]
	}
	at := int(r.total % int64(r.limit))
	n := copy(r.buf[at:], p)
	copy(r.buf, p[n:])
	r.total += int64(len(p))
}

// oldest is the offset of the first byte still held.
func (r *replayRing) oldest() int64 { return max(0, r.total-int64(r.limit)) }

// since returns a copy of the bytes from offset on and the offset of the
// first of them: later than asked when those bytes were dropped already.
// At or past the end it returns nothing and the end offset.
func (r *replayRing) since(offset int64) ([]byte, int64) {
	offset = max(offset, r.oldest())
	if offset >= r.total {
		return nil, r.total
	}
	out := make([]byte, r.total-offset)
	at := int(offset % int64(r.limit))
	n := copy(out, r.buf[at:])
	copy(out[n:], r.buf)
	return out, offset
}
