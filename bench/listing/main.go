// Command listing stands in for a lifecycle server with many sandboxes:
// it serves only GET /v1/sandboxes, N copies of one sandbox record (fresh
// ids), paged as the lifecycle server pages them (pageSize at most 200).
//
//	listing RECORD-FILE N
//
// It prints the address it listens on. Every page is rendered once, on
// first request, and then served as stored bytes, so a benchmark reading
// it times the client rather than this server.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: listing RECORD-FILE N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 0 {
		fmt.Fprintln(os.Stderr, "listing: N must be a whole number")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "listing:", err)
		os.Exit(1)
	}
	s := &stand{record: bytes.TrimSpace(raw), n: n, pages: map[[2]int][]byte{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listing:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	http.HandleFunc("GET /v1/sandboxes", s.serve)
	fmt.Fprintln(os.Stderr, "listing:", http.Serve(ln, nil))
	os.Exit(1)
}

type stand struct {
	record []byte
	n      int
	mu     sync.Mutex
	pages  map[[2]int][]byte
}

func (s *stand) serve(w http.ResponseWriter, r *http.Request) {
	page, size := number(r, "page", 1), min(number(r, "pageSize", 20), 200)
	s.mu.Lock()
	body, ok := s.pages[[2]int{page, size}]
	if !ok {
		body = s.render(page, size)
		s.pages[[2]int{page, size}] = body
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

// render builds one page: the record with its id replaced by a fresh one.
func (s *stand) render(page, size int) []byte {
	lo, hi := min((page-1)*size, s.n), min(page*size, s.n)
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := lo; i < hi; i++ {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(s.record, &rec); err != nil {
			panic(err)
		}
		rec["id"] = json.RawMessage(fmt.Sprintf(`"%032x"`, i+1))
		out, _ := json.Marshal(rec)
		if i > lo {
			b.WriteByte(',')
		}
		b.Write(out)
	}
	pagination, _ := json.Marshal(map[string]any{"page": page, "pageSize": size, "totalItems": s.n,
		"totalPages": (s.n + size - 1) / size, "hasNextPage": hi < s.n})
	fmt.Fprintf(&b, `],"pagination":%s}`+"\n", pagination)
	return b.Bytes()
}

func number(r *http.Request, name string, def int) int {
	if v, err := strconv.Atoi(r.URL.Query().Get(name)); err == nil && v > 0 {
		return v
	}
	return def
}
