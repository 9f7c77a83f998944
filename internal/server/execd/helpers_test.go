//go:build linux

package execd

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osb-dev/osb/internal/server/nullcheck"
	"github.com/osb-dev/osb/internal/server/sandbox"
)

// newSandbox starts a sandbox without namespaces, its entrypoint sleeping.
func newSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	return startSandbox(t, false)
}

// startSandbox starts a sandbox, in namespaces with its agent when
// isolated, whose environment holds SANDBOX_VAR for commands to find.
func startSandbox(t *testing.T, isolated bool) *sandbox.Sandbox {
	t.Helper()
	b := make([]byte, 16)
	rand.Read(b)
	sb, err := sandbox.New(sandbox.Config{ID: hex.EncodeToString(b), Dir: filepath.Join(t.TempDir(), "sb"), Isolated: isolated, Agent: true, Env: map[string]string{"SANDBOX_VAR": "from-sandbox"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Start([]string{"sleep", "300"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Remove() })
	return sb
}

// awaitMemoryUse waits until the sandbox uses memory: Start returns before
// its first process has joined the sandbox's cgroup and allocated there,
// and until then the sandbox rightly uses none.
func awaitMemoryUse(t *testing.T, sb *sandbox.Sandbox) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); sb.Usage().RSSBytes == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sandbox uses no memory a minute after its start")
		}
	}
}

// answer is a whole HTTP response.
type answer struct {
	status int
	header http.Header
	body   string
}

// open sends a request over real HTTP and returns the response unread, for
// streams. body is nil, a string or an io.Reader sent as it is, or any
// other value sent as JSON; hdr holds header name, value pairs.
func open(t *testing.T, method, url string, body any, hdr ...string) *http.Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case io.Reader:
		rd = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
		hdr = append([]string{"Content-Type", "application/json"}, hdr...)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// call is open, reading the whole answer.
func call(t *testing.T, method, url string, body any, hdr ...string) answer {
	t.Helper()
	resp := open(t, method, url, body, hdr...)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if nulls := nullcheck.Paths(b); strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && len(nulls) > 0 {
		t.Errorf("%s %s answered null at %v", method, url, nulls)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// handlerFor is the execd API of sb as the server serves it: here, or
// through the agent inside an isolated sandbox.
func handlerFor(sb *sandbox.Sandbox, opts Options) http.Handler {
	if sock := sb.AgentSocket(); sock != "" {
		return Remote(sock, Watch{})
	}
	return New(sb, opts)
}
