package client

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/osb-dev/osb/internal/server/servertest"
)

// ptyDataPlane returns the execd data plane of a new sandbox on a local
// server whose endpoints carry a secret header, reached directly or
// through the server's proxy (an endpoint with a path).
func ptyDataPlane(t *testing.T, proxy bool) *DataPlane {
	t.Helper()
	srv := servertest.Start(t, servertest.NoIsolation)
	c, err := New(Options{Domain: srv.Addr(), APIKey: servertest.APIKey, UseServerProxy: proxy})
	if err != nil {
		t.Fatal(err)
	}
	sb := localSandbox(t, c)
	dp, err := c.DataPlane(context.Background(), sb.ID, PortExecd)
	if err != nil {
		t.Fatal(err)
	}
	if len(dp.Endpoint.Headers) == 0 || !strings.HasSuffix(dp.Endpoint.Endpoint, "/proxy/44772") {
		t.Fatalf("endpoint %+v", dp.Endpoint)
	}
	return dp
}

// collect reads frames to the end of the socket.
func collect(t *testing.T, conn *PTYConn) (stdout, stderr []byte, frames []*PTYFrame, end error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		f, err := conn.Next(ctx)
		if err != nil {
			return stdout, stderr, frames, err
		}
		switch f.Kind {
		case PTYStdout, PTYReplay:
			stdout = append(stdout, f.Data...)
		case PTYStderr:
			stderr = append(stderr, f.Data...)
		default:
			frames = append(frames, f)
		}
	}
}

func TestPTYPipeRoundTrip(t *testing.T) {
	for _, proxy := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "server proxy"}[proxy], func(t *testing.T) {
			ctx := context.Background()
			dp := ptyDataPlane(t, proxy)
			created, err := dp.CreatePTY(ctx, PTYRequest{Command: "cat; echo bye >&2; exit 5"})
			if err != nil || !created.StdinEOF {
				t.Fatalf("%+v %v: osb server announces stdin_eof", created, err)
			}
			id := created.ID
			conn, err := dp.DialPTY(ctx, id, PTYDial{Pipe: true})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			in := bytes.Repeat([]byte("0123456789abcdef\x00\xff"), 10000) // several stdin frames
			if err := conn.WriteStdin(ctx, in); err != nil {
				t.Fatal(err)
			}
			if err := conn.CloseStdin(ctx); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, frames, end := collect(t, conn)
			if !bytes.Equal(stdout, in) || string(stderr) != "bye\n" {
				t.Errorf("stdout %d bytes (want %d), stderr %q", len(stdout), len(in), stderr)
			}
			if len(frames) != 2 || frames[0].Kind != PTYConnected || frames[0].Mode != "pipe" || frames[0].SessionID != id ||
				frames[1].Kind != PTYExit || frames[1].ExitCode == nil || *frames[1].ExitCode != 5 {
				t.Errorf("frames %+v", frames)
			}
			var closed *PTYClosedError
			if !errors.As(end, &closed) || closed.Code != 1000 || closed.TakenOver() {
				t.Errorf("end: %v", end)
			}

			st, err := dp.PTYSession(ctx, id)
			if err != nil || st.Running || st.OutputOffset != int64(len(in)+4) || st.ExitCode == nil || *st.ExitCode != 5 {
				t.Errorf("status %+v, %v", st, err)
			}
			list, err := dp.ListPTY(ctx)
			if err != nil || len(list) != 1 || list[0].SessionID != id || list[0].Command != "cat; echo bye >&2; exit 5" {
				t.Errorf("list %+v, %v", list, err)
			}
			if err := dp.DeletePTY(ctx, id); err != nil {
				t.Fatal(err)
			}
			if _, err := dp.DialPTY(ctx, id, PTYDial{}); !IsStatus(err, 404) || !strings.Contains(err.Error(), "code CONTEXT_NOT_FOUND") {
				t.Errorf("dial after delete: %v", err)
			}
		})
	}
}

func TestPTYHolderRefusalAndTakeover(t *testing.T) {
	ctx := context.Background()
	dp := ptyDataPlane(t, false)
	created, err := dp.CreatePTY(ctx, PTYRequest{})
	if err != nil {
		t.Fatal(err)
	}
	id := created.ID
	first, err := dp.DialPTY(ctx, id, PTYDial{Pipe: true})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if f, err := first.Next(ctx); err != nil || f.Kind != PTYConnected {
		t.Fatalf("connected: %+v %v", f, err)
	}
	var apiErr *APIError
	if _, err := dp.DialPTY(ctx, id, PTYDial{}); !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Code != "ALREADY_CONNECTED" {
		t.Errorf("second client: %v", err)
	}
	second, err := dp.DialPTY(ctx, id, PTYDial{Takeover: true})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	var closed *PTYClosedError
	if _, _, _, end := collect(t, first); !errors.As(end, &closed) || !closed.TakenOver() {
		t.Errorf("first client's end: %v", end)
	}
	// The same shell, still in pipe mode; a ping is answered in order.
	if err := second.WriteStdin(ctx, []byte("echo $$ >/dev/null; echo still-here\n")); err != nil {
		t.Fatal(err)
	}
	second.Ping(ctx)
	var out []byte
	pong := false
	for !pong || !bytes.Contains(out, []byte("still-here\n")) {
		f, err := second.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f.Data...)
		pong = pong || f.Kind == PTYPong
	}
}

// execd has no route that lists sessions: its plain-text 404 says so.
func TestListPTYUnsupported(t *testing.T) {
	dp := dataPlaneTo(t, http.NotFoundHandler().ServeHTTP)
	if _, err := dp.ListPTY(context.Background()); !errors.Is(err, ErrPTYListUnsupported) {
		t.Errorf("list on execd: %v", err)
	}
}

// The handshake carries the endpoint's headers to the endpoint's path and
// follows no redirect, so the headers never reach another address.
func TestDialPTYHeadersAndNoRedirect(t *testing.T) {
	var elsewhere []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere = append(elsewhere, r.Header.Get("X-Gate"))
	}))
	defer other.Close()
	var seen string
	dp := dataPlaneTo(t, func(w http.ResponseWriter, r *http.Request) {
		seen = r.URL.Path + "?" + r.URL.RawQuery + " upgrade=" + r.Header.Get("Upgrade")
		http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
	})
	_, err := dp.DialPTY(context.Background(), "s1", PTYDial{Pipe: true, Since: 42, Takeover: true})
	if !IsStatus(err, http.StatusFound) {
		t.Errorf("dial: %v", err)
	}
	if seen != "/pty/s1/ws?pty=0&since=42&takeover=1 upgrade=websocket" || len(elsewhere) != 0 {
		t.Errorf("request %q; redirect target saw %q", seen, elsewhere)
	}
}

// A frame released gives its memory to a later frame of the stream; one
// not released keeps its data, whatever comes after it.
func TestPTYFrameRelease(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dp := ptyDataPlane(t, false)
	created, err := dp.CreatePTY(ctx, PTYRequest{Command: "seq 1 200000"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := dp.DialPTY(ctx, created.ID, PTYDial{Pipe: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	type held struct {
		f    *PTYFrame
		copy string
	}
	var kept []held
	var out strings.Builder
	released := map[*byte]bool{}
	reused := 0
	for i := 0; ; i++ {
		f, err := conn.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if f.Kind == PTYExit {
			break
		}
		if f.Kind != PTYStdout || len(f.Data) == 0 {
			continue
		}
		out.Write(f.Data)
		p := unsafe.SliceData(f.Data)
		if released[p] {
			reused++
		}
		if i%2 == 0 {
			kept = append(kept, held{f, string(f.Data)})
			continue
		}
		released[p] = true
		f.Release()
	}
	var want strings.Builder
	for i := 1; i <= 200000; i++ {
		want.WriteString(strconv.Itoa(i) + "\n")
	}
	if out.String() != want.String() {
		t.Errorf("the stream read %d bytes, not seq's %d", out.Len(), want.Len())
	}
	for i, h := range kept {
		if string(h.f.Data) != h.copy {
			t.Fatalf("frame %d kept was overwritten by a later one", i)
		}
	}
	if reused == 0 {
		t.Errorf("no frame of %d took the memory of one released", len(released))
	}
}
