package cmdtest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Answering returns an environment whose server answers every request with
// body as JSON (postStatus to a POST, 200 to the rest), its host:port, and
// a function listing the requests it got as "METHOD PATH".
func Answering(t testing.TB, body string, postStatus int) (env *Env, addr string, requests func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(postStatus)
		}
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	env = Offline(t)
	env.Vars["OPEN_SANDBOX_DOMAIN"] = srv.URL
	return env, strings.TrimPrefix(srv.URL, "http://"), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}
