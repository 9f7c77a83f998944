// Package transfer_test measures what `osb file upload` and `osb file
// download` allocate, at several file sizes, to show it does not grow with
// the size of the file:
//
//	go test -run '^$' -bench . -benchmem ./bench/transfer/
//
// B/op and allocs/op should stay about the same from 1 MiB to 256 MiB
// (they count the in-process server as well as osb). Throughput against
// curl is bench/run's (rows upload and download).
package transfer_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
	"github.com/osb-dev/osb/internal/server"
)

var sizes = []int64{1 << 20, 16 << 20, 256 << 20}

// setup starts a local server with one sandbox and makes a sparse local file.
func setup(b *testing.B, size int64) (env *cmdtest.Env, id, src string) {
	b.Helper()
	env = cmdtest.New(b, func(o *server.Options) { o.NoIsolation = true })
	out := env.Must("sandbox", "create", "-i", "bench", "-o", "json")
	var v struct{ ID string }
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		b.Fatal(err)
	}
	src = filepath.Join(b.TempDir(), "src")
	if err := os.Truncate(createEmpty(b, src), size); err != nil {
		b.Fatal(err)
	}
	return env, v.ID, src
}

func createEmpty(b *testing.B, p string) string {
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	f.Close()
	return p
}

func BenchmarkUpload(b *testing.B) {
	for _, size := range sizes {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			env, id, src := setup(b, size)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				env.Must("file", "upload", id, src, "/tmp/f")
			}
		})
	}
}

func BenchmarkDownload(b *testing.B) {
	for _, size := range sizes {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			env, id, src := setup(b, size)
			env.Must("file", "upload", id, src, "/tmp/f")
			dst := filepath.Join(b.TempDir(), "dst")
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				env.Must("file", "download", id, "/tmp/f", dst)
			}
		})
	}
}
