package cp_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/ops"
)

// smallTree is n files of 1 KiB, each its own content.
func smallTree(n int) map[string]node {
	nodes := map[string]node{}
	for i := range n {
		nodes[fmt.Sprintf("f%04d", i)] = node{mode: 0o644, content: fmt.Sprintf("%04d", i) + strings.Repeat("x", 1020)}
	}
	return nodes
}

// A client that reads slowly (a congested link, a process under strace)
// still gets every file of a tar download. The server has written the
// whole stream, its exit frame and its close frame long before the client
// takes them in: what it wrote must not be thrown away when it closes the
// connection, and neither end may take a pong that comes late, behind the
// output, for a connection lost. Not parallel: it shortens the client's
// keep-alive so that pings go both ways while the stream is on its way.
func TestTarDownloadToASlowClientIsWhole(t *testing.T) {
	keepAlive := ops.KeepAlive
	ops.KeepAlive = 4 * time.Second
	t.Cleanup(func() { ops.KeepAlive = keepAlive })
	env, id, nodes := sandboxWithTree(t)

	// 64 KiB a second: a frame of output a second, about 10 s for the
	// stream, of which several seconds queued on the way when it ends.
	env.ClientOptions = func(o *client.Options) {
		o.HTTPClient = &http.Client{Transport: testTransport(func(c net.Conn) net.Conn { return &slowConn{Conn: c, rate: 64 << 10} })}
	}
	back := t.TempDir()
	env.Must("cp", id+":/workspace/tree", back, "--via", "tar")
	compareTrees(t, readTree(t, filepath.Join(back, "tree")), nodes)
	stagingLeft(t, back)
}

// A tar stream that breaks off fails the copy, exit 1, naming the files
// not written; those written are whole, and no partial file or staging
// directory is left.
func TestTarDownloadCutOffLeavesNoPartialFile(t *testing.T) {
	t.Parallel()
	env, id, nodes := sandboxWithTree(t)

	// Each connection breaks after 200 KiB: the tar stream (600 KiB) part
	// way, the small answers before and after it not at all.
	env.ClientOptions = func(o *client.Options) {
		o.HTTPClient = &http.Client{Transport: testTransport(func(c net.Conn) net.Conn { return &breakingConn{Conn: c, left: 200 << 10} })}
	}
	back := t.TempDir()
	r := env.Run("cp", id+":/workspace/tree", back, "--via", "tar").ExpectCode(t, 1)
	got := readTree(t, filepath.Join(back, "tree"))
	missing := len(nodes) - len(got)
	want := fmt.Sprintf("Error: %d file(s) not written here: ", missing)
	if missing == 0 || !strings.HasPrefix(r.Stderr, want) || !strings.Contains(r.Stderr, "connection broken by the test") {
		t.Errorf("stderr %q, want it to start %q and give the cause", r.Stderr, want)
	}
	for name, nd := range got {
		if nodes[name] != nd {
			t.Errorf("%s: got %+v, want %+v", name, nd, nodes[name])
		}
	}
	stagingLeft(t, back)
}

// testTransport is an HTTP transport whose connections are wrapped.
func testTransport(wrap func(net.Conn) net.Conn) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	var dialer net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return wrap(c), nil
	}
	return tr
}

// slowConn reads at most rate bytes a second.
type slowConn struct {
	net.Conn
	rate int
}

func (c *slowConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p[:min(len(p), 4<<10)])
	time.Sleep(time.Duration(n) * time.Second / time.Duration(c.rate))
	return n, err
}

// breakingConn fails its reads once left bytes have been read.
type breakingConn struct {
	net.Conn
	left int
}

func (c *breakingConn) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.Conn.Close()
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection broken by the test")}
	}
	n, err := c.Conn.Read(p[:min(len(p), c.left)])
	c.left -= n
	return n, err
}

// sandboxWithTree is a sandbox with 400 small files uploaded to
// /workspace/tree, and those files.
func sandboxWithTree(t *testing.T) (*cmdtest.Env, string, map[string]node) {
	env, id := newSandbox(t)
	nodes := smallTree(400)
	src := filepath.Join(t.TempDir(), "tree")
	makeTree(t, src, nodes)
	env.Must("cp", src, id+":/workspace/tree", "--via", "tar")
	return env, id, nodes
}
